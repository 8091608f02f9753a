package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// Options configure a Store.
type Options struct {
	// Policy derives relevance from events; the zero value means
	// api.DefaultPolicy().
	Policy api.Policy
	// Timeout bounds the wait for the file lock held by another process.
	Timeout time.Duration
	// ReadOnly opens the file without write access.
	ReadOnly bool
	// Now returns the server time for events without a timestamp.
	Now func() time.Time
	// MaxSize caps the database file and its event log together, in
	// bytes (0: no cap). A write that would grow them further fails with
	// api.CodeStorageFull, as a full disk does, and stores nothing.
	MaxSize int64

	// direct writes events straight into bbolt, one transaction per
	// batch, without the event log: the write path before the log, kept
	// for the benchmarks and tests that compare the two.
	direct bool
	// noFreelistSync leaves bbolt's list of free pages out of the
	// commits, as before: for the benchmark that compares the two.
	noFreelistSync bool
	// noApplier leaves the tail unapplied until a delete, a snapshot or
	// Close applies it: for tests of reads that merge the tail.
	noApplier bool
	// afterApply, if set, is called after each pass of the applier: tests
	// wait on it instead of sleeping for a tick.
	afterApply func()
	// openFile, if set, opens the database file in bbolt's place: tests
	// see that an Open holds the file and waits for its lock.
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
}

// Store is the bbolt-backed store. It is safe for concurrent use.
type Store struct {
	db     *bolt.DB
	policy api.Policy
	now    func() time.Time

	// itemsVersion changes on every catalogue write and eventsVersion on
	// every interaction write, so readers can tell whether a cache is stale.
	itemsVersion  atomic.Uint64
	eventsVersion atomic.Uint64

	readOnly bool
	maxSize  int64
	recent   recentIndex // a user's recent impressions (online_recent.go)
	log      *eventLog   // nil: direct writes (Options.direct)

	// Lock order: applyMu, mu, log.mu, tailMu.
	applyMu     sync.Mutex   // one apply at a time
	mu          sync.Mutex   // appenders, item allocation, the tail's generation list
	tailMu      sync.RWMutex // readers of the tail against its changes
	foldMu      sync.Mutex   // the tail's folded records (tail.go); after tailMu and bbolt's transactions
	gens        []*tailGen   // the unapplied tail, oldest first; the last one takes appends
	tailEvents  int64
	applying    int64  // of tailEvents, those the apply transaction in flight writes
	nextItem    uint64 // the next dense item index
	applyErr    error  // the last apply's failure, nil after a success
	closed      bool
	room        *sync.Cond // on mu: the tail shrank, or the store closed
	recBuf      []byte
	kick        chan struct{}
	foldKick    chan struct{} // nil without the background fold
	stop        chan struct{}
	applierDone chan struct{}     // closed once the applier and the folder stopped
	filter      *pairFilter       // the pairs bbolt holds, for the fold; nil without the applier
	storedItems map[string]uint64 // item indices appends looked up in bbolt (rememberItem)
	afterApply  func()            // Options.afterApply
}

var _ backend.Store = (*Store)(nil)

// batchDelay is how long db.Batch waits for more writers before it
// commits. Writers arriving during a commit coalesce into the next one
// anyway, so a short wait mainly spares a lone write the default 10 ms.
const batchDelay = 2 * time.Millisecond

// Open opens (creating if needed) the database at path.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout == 0 {
		opts.Timeout = time.Second
	}
	if opts.Policy.Types == nil {
		opts.Policy = api.DefaultPolicy()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	db, err := openBolt(path, &bolt.Options{
		Timeout:      opts.Timeout,
		ReadOnly:     opts.ReadOnly,
		FreelistType: bolt.FreelistMapType,
		// Every commit writes the list of free pages, so that an Open after
		// a crash reads it instead of walking every page of the file to
		// rebuild it (tens of seconds for a file of gigabytes out of the
		// page cache). Events are committed by the applier in large
		// transactions, so the list's write is a small part of each.
		NoFreelistSync: opts.noFreelistSync,
		MaxSize:        int(opts.MaxSize),
		// The applier's transactions rewrite most pages of a file of
		// scattered users, and the file grows while one is open; each
		// remap would first copy out every key and value it holds (7% of
		// the server's CPU under live ingest at 10M events).
		InitialMmapSize: mapSize(path),
		OpenFile:        opts.openFile,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: the database is locked by another process", path)
	}
	if !opts.ReadOnly && (errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		cause := err
		var pe *os.PathError
		if errors.As(err, &pe) {
			cause = pe.Err
		}
		return nil, fmt.Errorf("open %s: the database file is not writable (%v): the service needs read and write access to the file and its folder", path, cause)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.MaxBatchDelay = batchDelay
	s := &Store{db: db, policy: opts.Policy, now: opts.Now, readOnly: opts.ReadOnly, maxSize: opts.MaxSize,
		afterApply: opts.afterApply}
	if err := initDB(db, opts.ReadOnly); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.direct {
		return s, nil
	}
	if err := s.openLog(path, opts.noApplier); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// mapSize is the size bbolt first maps the file at path to: four times its
// size once it holds 256 MiB, so that it is remapped only each time it has
// grown fourfold. (A smaller file keeps bbolt's own growth, which maps and
// grows it in powers of two: a new database stays small on disk; bbolt
// grows a file mapped past 16 MiB in steps of 16 MiB.) On Linux and the
// BSDs the map reserves address space only; on Windows bbolt would grow
// the file to the map's size, and a 32-bit address space has no room to
// spare, so there bbolt's own growth is kept.
func mapSize(path string) int {
	if runtime.GOOS == "windows" || strconv.IntSize < 64 {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < 256<<20 {
		return 0
	}
	return int(4 * fi.Size())
}

// openLog opens the event log, replays its unapplied records into the
// tail and (when writable) starts the applier, which applies them in the
// background: reads merge the tail meanwhile, so the store serves at once
// (applying the backlog a crash left at 20M stored events took 40–50 s
// on a loaded machine, most of a start).
func (s *Store) openLog(path string, noApplier bool) error {
	// The log lives beside the file a symbolic link names, where a bulk
	// load puts it.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	var id []byte
	var applied int64
	err := s.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		id = bytes.Clone(meta.Get(keyLogID))
		applied = int64(getU64(meta.Get(keyLogApplied)))
		s.nextItem = tx.Bucket(bucketItemIDs).Sequence() + 1
		return nil
	})
	if err != nil {
		return err
	}
	s.room = sync.NewCond(&s.mu)
	s.gens = []*tailGen{newTailGen(applied, 0)}
	if id == nil {
		// A read-only file from before the log (schema 2 or 3) has none.
		return nil
	}
	if !s.readOnly {
		if err := settlePendingLog(path, id); err != nil {
			return err
		}
	}
	l, err := openLog(path, id, applied, s.readOnly, s.replay)
	if err != nil {
		return err
	}
	s.log = l
	if s.readOnly {
		return nil
	}
	s.kick, s.stop, s.applierDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	if noApplier {
		close(s.applierDone)
		return nil
	}
	s.foldKick = make(chan struct{}, 1)
	if s.tailEvents > 0 {
		s.kick <- struct{}{} // apply the replayed tail now, not at the first tick
		s.foldKick <- struct{}{}
	}
	// The filter's first table is built once the applier first applies
	// events (growFilter): a process that never ingests (train, eval, a
	// read-mostly server) does not scan the pairs for it (3–4 CPU s at
	// 20M).
	s.filter = &pairFilter{}
	var wg sync.WaitGroup
	wg.Go(s.applier)
	wg.Go(s.folder)
	go func() {
		wg.Wait()
		s.filter.wg.Wait()
		close(s.applierDone)
	}()
	return nil
}

// openBolt opens path with bbolt and makes sure the file it locked is still
// the one at path. The bulk loader replaces a database by renaming a new
// file over it while it holds the old one's lock; a process that opened the
// path before the rename gets the lock on the old, unlinked file once the
// loader lets go, and would serve and write a file nobody sees again. It
// opens the path anew then. The file is opened with o.OpenFile when set.
func openBolt(path string, o *bolt.Options) (*bolt.DB, error) {
	open := o.OpenFile
	if open == nil {
		open = os.OpenFile
	}
	for attempt := 0; ; attempt++ {
		var f *os.File
		opts := *o
		opts.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
			var err error
			f, err = open(name, flag, perm)
			return f, err
		}
		db, err := bolt.Open(path, 0o600, &opts)
		if err != nil {
			return nil, err
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || os.SameFile(held, now) || attempt == 10 {
			return db, nil
		}
		db.Close()
	}
}

// Close applies the tail, stops the applier and closes the log and the
// database. Events it cannot apply stay in the log for the next open.
func (s *Store) Close() error {
	if s.log == nil || s.readOnly {
		return s.closeDB()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.closeDB()
	}
	s.mu.Unlock()
	close(s.stop)
	<-s.applierDone
	s.applyMu.Lock()
	s.mu.Lock()
	_ = s.applyLocked(false)
	s.closed = true
	s.room.Broadcast()
	s.mu.Unlock()
	s.applyMu.Unlock()
	err := s.log.close()
	if cerr := s.closeDB(); err == nil {
		err = cerr
	}
	return err
}

// closeDB closes the database.
func (s *Store) closeDB() error { return s.db.Close() }

// Path is the database file.
func (s *Store) Path() string { return s.db.Path() }

// Policy is the relevance policy the store applies.
func (s *Store) Policy() api.Policy { return s.policy }

// Versions tell a cache whether the catalogue or the interactions changed.
func (s *Store) Versions() (items, events uint64) {
	return s.itemsVersion.Load(), s.eventsVersion.Load()
}

// view runs fn in a read transaction unless ctx is already done.
func (s *Store) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

// update runs fn in a write transaction unless ctx is already done, and
// turns the failures of a full disk or a read-only file into clear errors.
func (s *Store) update(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.writeErr(s.db.Update(fn))
}

// writeErr turns the failures of a full disk or a read-only file into
// clear errors.
func (s *Store) writeErr(err error) error {
	if err == nil {
		return nil
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return err
	}
	if errors.Is(err, bolterrors.ErrDatabaseReadOnly) {
		return &api.Error{Code: api.CodeUnavailable, Message: "the database is open read-only; writes are refused"}
	}
	if why := fullReason(err); why != "" {
		return &api.Error{Code: api.CodeStorageFull, Message: "the database file cannot grow (" + why +
			"); nothing of this request was stored: free space and retry"}
	}
	return fmt.Errorf("storage: write failed: %w", err)
}

// fullReason says why a write failed for want of space, or "" when it
// did not. bbolt wraps some system errors as text ("file resize error:
// file too large"), so the errno's message is matched too.
func fullReason(err error) string {
	if errors.Is(err, bolterrors.ErrMaxSizeReached) {
		return "it reached the configured maximum size"
	}
	for _, c := range []struct {
		errno syscall.Errno
		why   string
	}{
		{syscall.ENOSPC, "no space left on the device"},
		{syscall.EDQUOT, "the disk quota is exceeded"},
		{syscall.EFBIG, "the file size limit is reached"},
	} {
		if errors.Is(err, c.errno) || strings.Contains(err.Error(), c.errno.Error()) {
			return c.why
		}
	}
	return ""
}

// batch is update through bolt's Batch: concurrent callers share one
// commit. fn must be safe to run more than once.
func (s *Store) batch(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.writeErr(s.db.Batch(fn))
}

func notFound(kind, id string) error {
	return api.Errorf(api.CodeNotFound, "%s %q not found", kind, id)
}
