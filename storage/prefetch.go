package storage

import "os"

// Prefetch reads the whole database file once, from a goroutine, so that
// the page cache holds it and the requests after a start find the pages
// bbolt maps in memory: bbolt maps the file MADV_RANDOM, so each page a
// request touches first is otherwise one 4 KiB disk read, taken while the
// request's thread keeps its processor. Reading the file is a sequence of
// large system calls at the disk's speed (3.8 GB in about 7 s here).
// posix_fadvise(WILLNEED), used before, reads only the first readahead
// window on Linux, not the file. It returns at once; a failure only loses
// the head start, and closing the store stops the read.
func (s *Store) Prefetch() {
	path, stop := s.db.Path(), s.stop // here: Close clears the path; stop is nil without the event log
	go func() {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		buf := make([]byte, 4<<20)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.Read(buf); err != nil { // io.EOF at the end
				return
			}
		}
	}()
}
