package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// compactTempInfix names the temporary file of a compaction: the target's
// name, this, and a random suffix, in the target's folder.
const compactTempInfix = ".compact-"

// Compact rewrites the bbolt database at path without its free pages. A
// bbolt file never shrinks: the pages of deleted records (impressions past
// their retention, old model versions, deleted users) are reused by later
// writes but stay in the file, which a start reads whole (Prefetch). Every
// bucket, key, value and sequence is copied as it is, pages filled; the
// event log beside the file is left as it is, so events acknowledged but
// not yet applied stay pending. The file is held locked from the start
// until the copy has replaced it (rename, then the folder synced), so no
// server runs on it meanwhile; a kill leaves the old file. It returns the
// file's size before and after.
func Compact(path string, timeout time.Duration) (before, after int64, err error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // the rename replaces the file a link names
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	// Writable, for the exclusive lock: a reader's would let a server in.
	src, err := openBolt(path, &bolt.Options{Timeout: timeout, FreelistType: bolt.FreelistMapType})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return 0, 0, fmt.Errorf("open %s: the database is locked by another process (stop the server first)", path)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer src.Close()
	if err := src.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			return fmt.Errorf("%s is not a recsys database (no meta bucket)", path)
		}
		return nil
	}); err != nil {
		return 0, 0, err
	}
	removeStaleTemps(path, compactTempInfix)
	tmpName, err := tempBeside(path, compactTempInfix, true)
	if err != nil {
		return 0, 0, err
	}
	published := false
	defer func() {
		if !published {
			os.Remove(tmpName)
		}
	}()
	dst, err := bolt.Open(tmpName, 0o600, &bolt.Options{Timeout: timeout, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return 0, 0, err
	}
	// Each commit of 64 MiB is fsynced; the last one leaves the copy whole.
	if err := bolt.Compact(dst, src, 64<<20); err != nil {
		dst.Close()
		return 0, 0, fmt.Errorf("compacting %s: %w", path, err)
	}
	if err := dst.Close(); err != nil {
		return 0, 0, err
	}
	if err := publish(tmpName, path, true); err != nil {
		return 0, 0, err
	}
	published = true
	nfi, err := os.Stat(path)
	if err != nil {
		return fi.Size(), 0, err
	}
	return fi.Size(), nfi.Size(), nil
}
