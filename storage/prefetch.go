package storage

import (
	"fmt"
	"os"
	"sync/atomic"
)

// Prefetch reads the whole database file once, from a goroutine, so that
// the page cache holds it and the requests after a start find the pages
// bbolt maps in memory: bbolt maps the file MADV_RANDOM, so each page a
// request touches first is otherwise one 4 KiB disk read, taken while the
// request's thread keeps its processor. Reading the file is a sequence of
// large system calls at the disk's speed (3.8 GB in 2.3 s to 7 s on the
// machines measured).
// posix_fadvise(WILLNEED), used before, reads only the first readahead
// window on Linux, not the file. A file of at most prefetchAtOnce is read
// before it returns; a larger one from a goroutine, which closing the
// store stops. A failure only loses the head start.
//
// The Warmup it returns lets readiness wait for the read when the file can
// stay in memory (at most half of it, or of the cgroup's limit); it is nil
// for a larger file, a file already read, or where the memory size is not
// known.
func (s *Store) Prefetch() *Warmup {
	path, stop := s.db.Path(), s.stop // here: Close clears the path; stop is nil without the event log
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil
	}
	w := &Warmup{size: st.Size(), done: make(chan struct{})}
	read := func() {
		defer close(w.done)
		defer f.Close()
		buf := make([]byte, 4<<20)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err := f.Read(buf)
			w.read.Add(int64(n))
			if err != nil { // io.EOF at the end
				return
			}
		}
	}
	if w.size <= prefetchAtOnce {
		read() // a few reads: the start is ready with the file in memory
		return nil
	}
	go read()
	if mem := physicalMemory(); mem == 0 || w.size > mem/2 {
		return nil
	}
	return w
}

// prefetchAtOnce is the largest file Prefetch reads before it returns.
const prefetchAtOnce = 64 << 20

// Warmup is a Prefetch under way.
type Warmup struct {
	size int64
	read atomic.Int64
	done chan struct{}
}

// Err is nil once the file is read (or the read ended early), else an
// error saying how far it is.
func (w *Warmup) Err() error {
	select {
	case <-w.done:
		return nil
	default:
		return fmt.Errorf("reading the database file into memory after the start: %d of %d MB", w.read.Load()>>20, w.size>>20)
	}
}
