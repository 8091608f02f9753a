package storage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The event log (docs/design.md#ingest) is the write path of POSTed
// events: a folder <db>.events beside the bbolt file holding segment files
// of batch records. A batch is durable once its record is fsynced; the
// applier folds records into the bbolt indexes later, in large
// transactions that also store the log position they reach. The log is
// never truncated below that position: it is the history of every event
// (type, value, time, arrival), kept for time-aware features.
//
// Segment: "RSYSLOG1" | 16-byte log id (the database's, meta "log/id") |
// records. Record: uint32 payload length | uint32 CRC-32C of the payload |
// payload. A position is the segment's base plus the offset in its file;
// a segment's name is its base in 20 decimal digits.

const (
	logMagic      = "RSYSLOG1"
	logHeaderSize = len(logMagic) + 16
	logRecordHead = 8
	// segmentBytesDefault is where the committer starts a new segment.
	segmentBytesDefault = 64 << 20
	// maxRecordBytes bounds a record's payload (a 10,000-event batch of
	// 256-byte ids takes about 5.2 MB).
	maxRecordBytes = 64 << 20
)

// logDir is the folder of the event log of the database at path.
func logDir(path string) string { return path + ".events" }

// logEvent is one event as the log stores it.
type logEvent struct {
	user, item, typ string
	itemIdx         uint64 // dense index, fixed when the batch is appended
	ts              int64  // event time; the server's when it came without one
	value           float64
	bits            uint8
}

// logEvent bits.
const (
	evHasValue = 1 << iota
	evPositive
	evNegative
	evNewItem // the batch created the item (its record is written at apply)
)

// logBatch is the payload of one record: the events of one request and
// their arrival time (the server's clock), which new items take as their
// creation time.
type logBatch struct {
	arrival int64
	events  []logEvent
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encodeRecord appends the record of lb (head and payload) to b.
func encodeRecord(b []byte, lb *logBatch) []byte {
	start := len(b)
	b = append(b, make([]byte, logRecordHead)...)
	b = binary.AppendVarint(b, lb.arrival)
	b = binary.AppendUvarint(b, uint64(len(lb.events)))
	for k := range lb.events {
		e := &lb.events[k]
		b = binary.AppendUvarint(b, e.itemIdx)
		b = append(b, e.bits)
		b = binary.AppendVarint(b, e.ts)
		if e.bits&evHasValue != 0 {
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(e.value))
		}
		b = appendString(b, e.user)
		b = appendString(b, e.item)
		b = appendString(b, e.typ)
	}
	payload := b[start+logRecordHead:]
	binary.BigEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.BigEndian.PutUint32(b[start+4:], crc32.Checksum(payload, crcTable))
	return b
}

// crcTable is the CRC-32C table of the records' checksums.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// segmentBytes is segmentBytesDefault; tests lower it to see segments roll.
var segmentBytes int64 = segmentBytesDefault

var errBadRecord = errors.New("storage: malformed event log record")

// recordReader decodes a payload.
type recordReader struct {
	b   []byte
	err error
}

// advance skips n bytes read by a varint decoder, or fails the reader
// when n says the decoder failed.
func (r *recordReader) advance(n int) {
	if n <= 0 {
		r.err, r.b = errBadRecord, nil
		return
	}
	r.b = r.b[n:]
}

func (r *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	r.advance(n)
	return v
}

func (r *recordReader) varint() int64 {
	v, n := binary.Varint(r.b)
	r.advance(n)
	return v
}

func (r *recordReader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.err = errBadRecord
		r.b = nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *recordReader) string() string { return string(r.bytes(r.uvarint())) }

// decodePayload decodes a payload whose checksum was verified.
func decodePayload(p []byte) (*logBatch, error) {
	r := &recordReader{b: p}
	lb := &logBatch{arrival: r.varint()}
	n := r.uvarint()
	if n > uint64(len(p)) { // every event takes several bytes
		return nil, errBadRecord
	}
	lb.events = make([]logEvent, 0, n)
	for k := uint64(0); k < n && r.err == nil; k++ {
		e := logEvent{itemIdx: r.uvarint()}
		if b := r.bytes(1); b != nil {
			e.bits = b[0]
		}
		e.ts = r.varint()
		if e.bits&evHasValue != 0 {
			if b := r.bytes(8); b != nil {
				e.value = math.Float64frombits(binary.BigEndian.Uint64(b))
			}
		}
		e.user, e.item, e.typ = r.string(), r.string(), r.string()
		lb.events = append(lb.events, e)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errBadRecord
	}
	return lb, nil
}

// segment is one file of the log.
type segment struct {
	base int64 // position of the file's first byte
	path string
}

func segmentName(base int64) string { return fmt.Sprintf("%020d.seg", base) }

// listSegments returns the segments of dir in position order.
func listSegments(dir string) ([]segment, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, name := range names {
		var base int64
		if _, err := fmt.Sscanf(filepath.Base(name), "%020d.seg", &base); err != nil || segmentName(base) != filepath.Base(name) {
			continue
		}
		segs = append(segs, segment{base: base, path: name})
	}
	slices.SortFunc(segs, func(a, b segment) int { return int(a.base - b.base) })
	return segs, nil
}

// scanSegment reads the records of the segment file f from position from
// (its base if lower) and calls fn with each record's batch and end
// position. It returns the position after the last whole record; a torn
// or corrupt record stops it there, which the caller may truncate away.
func scanSegment(f *os.File, seg segment, id []byte, from int64, fn func(lb *logBatch, end int64) error) (int64, error) {
	head := make([]byte, logHeaderSize)
	if _, err := io.ReadFull(f, head); err != nil {
		// A segment cut short while it was created holds no record.
		return seg.base, nil
	}
	if string(head[:len(logMagic)]) != logMagic {
		return 0, fmt.Errorf("%s is not an event log segment", seg.path)
	}
	if !bytes.Equal(head[len(logMagic):], id) {
		return 0, fmt.Errorf("%s belongs to another database (its log id differs from the database's)", seg.path)
	}
	off := int64(logHeaderSize)
	if from > seg.base+off {
		off = from - seg.base
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return 0, err
		}
	}
	r := bufio.NewReaderSize(f, 1<<20)
	rh := make([]byte, logRecordHead)
	for {
		if _, err := io.ReadFull(r, rh); err != nil {
			return seg.base + off, nil
		}
		n := binary.BigEndian.Uint32(rh)
		if n == 0 || n > maxRecordBytes {
			return seg.base + off, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return seg.base + off, nil
		}
		if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(rh[4:]) {
			return seg.base + off, nil
		}
		lb, err := decodePayload(payload)
		if err != nil {
			return seg.base + off, nil
		}
		off += logRecordHead + int64(n)
		if err := fn(lb, seg.base+off); err != nil {
			return 0, err
		}
	}
}

// eventLog appends records to the newest segment and makes them durable
// by group commit: one committer goroutine fsyncs for every appender
// waiting, so concurrent batches share an fsync.
type eventLog struct {
	dir string
	id  []byte

	mu      sync.Mutex // the file, written and size; held by appenders
	file    *os.File
	base    int64 // base of the current segment
	written int64 // position after the last record written
	failed  error // a failed fsync: the log takes no more writes

	syncMu  sync.Mutex
	synced  int64 // position up to which the log is on disk
	wanted  bool  // an appender waits for the committer
	closing bool
	cond    *sync.Cond
	done    chan struct{}
}

// openLog opens (creating) the log of the database at path with the given
// id and calls replay with every record from position applied on, in
// order. A torn tail (a record cut short or failing its checksum) in the
// last segment is cut off when the log is writable.
func openLog(path string, id []byte, applied int64, readOnly bool, replay func(lb *logBatch, end int64) error) (*eventLog, error) {
	dir := logDir(path)
	segs, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	l := &eventLog{dir: dir, id: id, done: make(chan struct{})}
	l.cond = sync.NewCond(&l.syncMu)
	end := int64(0)
	for k, seg := range segs {
		last := k == len(segs)-1
		if !last && segs[k+1].base <= applied {
			continue
		}
		f, err := os.Open(seg.path)
		if err != nil {
			return nil, err
		}
		end, err = scanSegment(f, seg, id, applied, replay)
		f.Close()
		if err != nil {
			return nil, err
		}
		if end < applied && seg.base <= applied && last {
			return nil, fmt.Errorf("the event log ends at position %d, before the position %d the database has applied: events are missing from %s", end, applied, dir)
		}
		if !last {
			if fi, err := os.Stat(seg.path); err != nil || seg.base+fi.Size() != end || end != segs[k+1].base {
				return nil, fmt.Errorf("event log segment %s is damaged at position %d", seg.path, end)
			}
		}
	}
	if len(segs) == 0 && applied > 0 {
		return nil, fmt.Errorf("the event log %s is missing: the database has applied it up to position %d", dir, applied)
	}
	if readOnly {
		l.written, l.synced = end, end
		return l, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		if err := l.newSegment(0); err != nil {
			return nil, err
		}
	} else {
		seg := segs[len(segs)-1]
		f, err := os.OpenFile(seg.path, os.O_RDWR, 0o600)
		if err != nil {
			return nil, err
		}
		if end < seg.base+int64(logHeaderSize) {
			// Created but cut short before its header reached the disk.
			if err := writeHeader(f, id); err != nil {
				f.Close()
				return nil, err
			}
			end = seg.base + int64(logHeaderSize)
		}
		if fi, err := f.Stat(); err == nil && fi.Size() > end-seg.base {
			// The torn tail of a write that was never acknowledged.
			if err := f.Truncate(end - seg.base); err != nil {
				f.Close()
				return nil, err
			}
			if err := f.Sync(); err != nil {
				f.Close()
				return nil, err
			}
		}
		if _, err := f.Seek(end-seg.base, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		l.file, l.base = f, seg.base
	}
	l.written, l.synced = end, end
	if len(segs) == 0 {
		l.written, l.synced = int64(logHeaderSize), int64(logHeaderSize)
	}
	go l.commit()
	return l, nil
}

func writeHeader(f *os.File, id []byte) error {
	if _, err := f.WriteAt(append([]byte(logMagic), id...), 0); err != nil {
		return err
	}
	return f.Sync()
}

// newSegment creates the segment starting at base, durably (the file, its
// header and its name), and makes it the current one.
func (l *eventLog) newSegment(base int64) error {
	f, err := os.OpenFile(filepath.Join(l.dir, segmentName(base)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = writeHeader(f, l.id)
	if err == nil {
		_, err = f.Seek(int64(logHeaderSize), io.SeekStart)
	}
	if err == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	l.file, l.base = f, base
	return nil
}

// write appends one encoded record and returns the position after it.
// The caller holds l.mu. A failed write leaves the file as it was.
func (l *eventLog) write(rec []byte) (int64, error) {
	if l.failed != nil {
		return 0, l.failed
	}
	if l.file == nil {
		return 0, errors.New("storage: the event log is closed")
	}
	if _, err := l.file.Write(rec); err != nil {
		// Cut off what part of the record did reach the file, so that
		// the next record starts where this one did.
		off := l.written - l.base
		if terr := l.file.Truncate(off); terr != nil {
			l.failed = fmt.Errorf("storage: the event log could not undo a failed write (%v): %w", terr, err)
			return 0, l.failed
		}
		if _, serr := l.file.Seek(off, io.SeekStart); serr != nil {
			l.failed = serr
		}
		return 0, err
	}
	l.written += int64(len(rec))
	return l.written, nil
}

// size is the number of bytes the log holds on disk.
func (l *eventLog) size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.written
}

// waitDurable returns once the log is on disk up to pos.
func (l *eventLog) waitDurable(pos int64) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	for l.synced < pos {
		if l.closing {
			return errors.New("storage: the event log is closed")
		}
		if err := l.syncFailed(); err != nil {
			return err
		}
		if !l.wanted {
			l.wanted = true
			l.cond.Broadcast()
		}
		l.cond.Wait()
	}
	return nil
}

func (l *eventLog) syncFailed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// commit is the committer: each round takes what has been written, starts
// a new segment when the current one is full, and fsyncs.
func (l *eventLog) commit() {
	defer close(l.done)
	for {
		l.syncMu.Lock()
		for !l.wanted && !l.closing {
			l.cond.Wait()
		}
		if l.closing && !l.wanted {
			l.syncMu.Unlock()
			return
		}
		l.wanted = false
		l.syncMu.Unlock()

		l.mu.Lock()
		f, target := l.file, l.written
		var err error
		if l.failed == nil && target-l.base >= segmentBytes {
			// The full segment is synced below; the new one already is.
			// On failure the old one goes on taking records.
			if l.newSegment(target) == nil {
				l.written = target + int64(logHeaderSize)
			}
		}
		l.mu.Unlock()
		if f != nil {
			err = f.Sync()
			if l.file != f {
				f.Close()
			}
		}
		l.syncMu.Lock()
		if err != nil {
			// After a failed fsync the kernel may have dropped the dirty
			// pages: nothing written since the last good fsync can be
			// trusted, so the log takes no more writes (a restart replays
			// what is on disk).
			l.mu.Lock()
			l.failed = fmt.Errorf("storage: fsync of the event log failed; restart the service: %w", err)
			l.mu.Unlock()
		} else if target > l.synced {
			l.synced = target
		}
		l.cond.Broadcast()
		l.syncMu.Unlock()
	}
}

// close stops the committer after a last fsync and closes the file.
func (l *eventLog) close() error {
	if l.file == nil { // read-only
		return nil
	}
	l.syncMu.Lock()
	l.closing, l.wanted = true, true
	l.cond.Broadcast()
	l.syncMu.Unlock()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}

// logHasRecords reports whether the log of the database at path holds any
// record (a pristine database's log holds none).
func logHasRecords(path string) (bool, error) {
	segs, err := listSegments(logDir(path))
	if err != nil {
		return false, err
	}
	for _, seg := range segs {
		fi, err := os.Stat(seg.path)
		if err != nil {
			return false, err
		}
		if fi.Size() > int64(logHeaderSize) {
			return true, nil
		}
	}
	return false, nil
}

// removeLog deletes the segments of a log that holds no record, and its
// folder.
func removeLog(path string) error {
	segs, err := listSegments(logDir(path))
	if err != nil {
		return err
	}
	for _, seg := range segs {
		if err := os.Remove(seg.path); err != nil {
			return err
		}
	}
	if err := os.Remove(logDir(path)); err != nil && !os.IsNotExist(err) && !strings.Contains(err.Error(), "not empty") {
		return err
	}
	return nil
}
