package storage

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// A bulk load writes the event log too, so that the history of every event
// (docs/design.md#ingest) does not depend on the path it came by: the
// events in arrival order, 10,000 to a record, in segments of a folder
// beside the temporary database file. The new database records the log's
// id and, as applied, its end. Publishing puts the log in place before the
// database, marked pending until the database is in place too: a log
// marked pending whose id is not the database's belongs to a load that
// never published, and is removed (logPending).

const (
	bulkLogRecord = 10000
	// pendingName marks a published log whose database may not be.
	pendingName = "pending"
	// lockName is held by the load writing a temporary log folder.
	lockName = "lock"
)

// bulkLog is the temporary log folder of a running bulk load.
type bulkLog struct {
	dir  string
	id   []byte
	end  int64
	lock *os.File
}

// writeBulkLog writes the events of b, in arrival order, as the log of the
// database at path, into a temporary folder beside it.
func writeBulkLog(path string, b *bulkBuilder) (*bulkLog, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), filepath.Base(logDir(path))+bulkTempInfix+"*")
	if err != nil {
		return nil, err
	}
	bl := &bulkLog{dir: dir, id: make([]byte, 16)}
	fail := func(err error) (*bulkLog, error) {
		bl.discard()
		return nil, err
	}
	if bl.lock, err = os.Create(filepath.Join(dir, lockName)); err != nil {
		return fail(err)
	}
	if err := syscall.Flock(int(bl.lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := rand.Read(bl.id); err != nil {
		return fail(err)
	}
	l := &eventLog{dir: dir, id: bl.id}
	if err := l.newSegment(0); err != nil {
		return fail(err)
	}
	l.written = int64(logHeaderSize)
	created := make([]bool, len(b.items)+1)
	for k := range b.items {
		// Items with a record before the events were not created by one.
		created[k+1] = k >= b.itemRecords
	}
	lb := logBatch{arrival: b.now, events: make([]logEvent, 0, bulkLogRecord)}
	var rec []byte
	flush := func() error {
		if len(lb.events) == 0 {
			return nil
		}
		rec = encodeRecord(rec[:0], &lb)
		lb.events = lb.events[:0]
		if l.written-l.base >= segmentBytes {
			if err := l.file.Sync(); err != nil {
				return err
			}
			old := l.file
			if err := l.newSegment(l.written); err != nil {
				return err
			}
			old.Close()
			l.written += int64(logHeaderSize)
		}
		_, err := l.write(rec)
		return err
	}
	for _, chunk := range b.events {
		for k := range chunk {
			e := &chunk[k]
			le := logEvent{user: b.users[e.user-1].id, item: b.items[e.item-1].id, typ: b.types[e.typ],
				itemIdx: uint64(e.item), ts: e.ts, value: e.value}
			if e.bits&bulkHasValue != 0 {
				le.bits |= evHasValue
			}
			if e.bits&bulkPositive != 0 {
				le.bits |= evPositive
			}
			if e.bits&bulkNegative != 0 {
				le.bits |= evNegative
			}
			if created[e.item] {
				le.bits |= evNewItem
				created[e.item] = false
			}
			lb.events = append(lb.events, le)
			if len(lb.events) == bulkLogRecord {
				if err := flush(); err != nil {
					l.file.Close()
					return fail(err)
				}
			}
		}
	}
	err = flush()
	if err == nil {
		err = l.file.Sync()
	}
	if cerr := l.file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fail(err)
	}
	bl.end = l.written
	return bl, nil
}

// publish puts the log in place as the log of the database at path,
// marked pending; done removes the mark once the database is in place.
func (bl *bulkLog) publish(path string) error {
	mark, err := os.Create(filepath.Join(bl.dir, pendingName))
	if err != nil {
		return err
	}
	err = mark.Sync()
	if cerr := mark.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(bl.dir)
	}
	if err == nil {
		// The target's own log holds no record (lockPristine).
		err = removeLog(path)
	}
	if err == nil {
		err = os.Rename(bl.dir, logDir(path))
	}
	if err == nil {
		bl.dir = logDir(path)
		err = syncDir(filepath.Dir(path))
	}
	return err
}

func (bl *bulkLog) done() error {
	_ = os.Remove(filepath.Join(bl.dir, lockName))
	bl.lock.Close()
	if err := os.Remove(filepath.Join(bl.dir, pendingName)); err != nil {
		return err
	}
	return syncDir(bl.dir)
}

// discard removes the temporary folder of a load that failed.
func (bl *bulkLog) discard() {
	if bl.lock != nil {
		bl.lock.Close()
	}
	os.RemoveAll(bl.dir)
}

// removeStaleLogs deletes the temporary log folders of killed loads into
// path; a folder whose lock is held belongs to a load still running.
func removeStaleLogs(path string) {
	names, _ := filepath.Glob(logDir(path) + bulkTempInfix + "*")
	for _, name := range names {
		f, err := os.Open(filepath.Join(name, lockName))
		if err == nil {
			locked := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
			f.Close()
			if locked {
				continue
			}
		}
		os.RemoveAll(name)
	}
}

// settlePendingLog finishes or undoes a bulk load's publication that a
// crash interrupted: a log marked pending is the database's when its id is
// the database's (the mark is dropped), and otherwise the log of a load
// whose database was never put in place (it is removed).
func settlePendingLog(path string, id []byte) error {
	dir := logDir(path)
	if _, err := os.Stat(filepath.Join(dir, pendingName)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	segs, err := listSegments(dir)
	if err != nil {
		return err
	}
	mine := false
	if len(segs) > 0 {
		if head, err := readHeader(segs[0].path); err == nil {
			mine = id != nil && bytes.Equal(head, id)
		}
	}
	if mine {
		_ = os.Remove(filepath.Join(dir, lockName))
		if err := os.Remove(filepath.Join(dir, pendingName)); err != nil {
			return err
		}
		return syncDir(dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// readHeader reads the log id in a segment's header.
func readHeader(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, logHeaderSize)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	if string(head[:len(logMagic)]) != logMagic {
		return nil, errors.New("not an event log segment")
	}
	return head[len(logMagic):], nil
}
