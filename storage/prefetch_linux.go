package storage

import (
	"os"

	"golang.org/x/sys/unix"
)

// Prefetch asks the kernel, from a goroutine, to read the whole database
// file into the page cache (posix_fadvise WILLNEED), so that the requests
// after a start find the pages bbolt maps in memory instead of each
// waiting for a disk read: a recommendation reads the user's record and
// pairs from the mapped file. It returns at once; a failure only loses the
// head start.
func (s *Store) Prefetch() {
	path := s.db.Path() // here: Close clears it
	go func() {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_WILLNEED)
	}()
}
