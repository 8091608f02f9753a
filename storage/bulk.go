package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/dump"
)

// The bulk loader builds a whole database from a stream of item records and
// events, for an import into a new (or pristine) database. It reads
// everything into memory, assigns the dense indices as ingest would (first
// seen, from 1), sorts the events by pair, folds each pair's events through
// the same fold as ingest, and writes every bucket in key order into a
// temporary file beside the target: append-only inserts into full pages in
// large transactions without fsync, then one fsync at the end. The file
// then replaces the target by one rename (or appears by one link where
// there was none) and the folder is synced, so a kill at any moment leaves
// the old file (or no file) or the complete new one.

// BulkOptions configure BulkLoad.
type BulkOptions struct {
	// Policy derives relevance from events; the zero value means
	// api.DefaultPolicy().
	Policy api.Policy
	// Now is the server time for events without a timestamp and for item
	// records' creation and update times.
	Now func() time.Time
	// Timeout bounds the wait for the lock of an existing target file.
	Timeout time.Duration
	// Progress, if set, is told each stage as it starts.
	Progress func(stage string)
}

// BulkSource streams what BulkLoad loads: first Items calls put for each
// item record (as PutItems would store it), then Events calls add for each
// event (as AddInteractions would). Either may be nil. An error from put or
// add stops the load; the source should return it.
type BulkSource struct {
	Items  func(put func(api.Item) error) error
	Events func(add func(api.Interaction) error) error
}

// BulkStats describe a finished bulk load.
type BulkStats struct {
	Items  int // item records read
	Events int
	Counts api.Counts
}

// bulkTempInfix names the temporary files of a bulk load: the target's name,
// this, and a random suffix, in the target's folder.
const bulkTempInfix = ".bulk-"

// BulkLoad builds the database at path from src. path must not exist or
// must be a pristine database (schema only, as a first Open leaves it, and
// no event in its log); otherwise it returns dump.ErrNotEmpty, touching
// neither the target nor the sources. On success every event is on disk
// (fsync of the file and of its folder) and the database is complete; on
// any failure or kill the target is as it was.
func BulkLoad(path string, opts BulkOptions, src BulkSource) (BulkStats, error) {
	if opts.Policy.Types == nil {
		opts.Policy = api.DefaultPolicy()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Second
	}
	if opts.Progress == nil {
		opts.Progress = func(string) {}
	}
	// A symbolic link is followed, so that the rename replaces the file
	// it names, not the link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	removeStaleTemps(path, bulkTempInfix)
	removeStaleLogs(path)
	// An existing target stays locked (bbolt's own flock) until the new
	// file has replaced it, so no server or import starts on it meanwhile.
	old, err := lockPristine(path, opts.Timeout)
	if err != nil {
		return BulkStats{}, err
	}
	if old != nil {
		defer old.Close()
	}
	tmpName, err := tempBeside(path, bulkTempInfix, old != nil)
	if err != nil {
		return BulkStats{}, err
	}
	published := false
	defer func() {
		if !published {
			os.Remove(tmpName)
		}
	}()

	b := newBulkBuilder(opts.Policy, opts.Now().UnixNano())
	var stats BulkStats
	if src.Items != nil {
		if err := src.Items(func(it api.Item) error { stats.Items++; b.putItem(it); return nil }); err != nil {
			return stats, err
		}
	}
	b.itemRecords = len(b.items)
	if src.Events != nil {
		if err := src.Events(b.add); err != nil {
			return stats, err
		}
	}
	stats.Events = b.nEvents
	opts.Progress("writing the event log")
	bl, err := writeBulkLog(path, b)
	if err != nil {
		return stats, err
	}
	defer func() {
		if !published {
			bl.discard()
		}
	}()
	if err := buildFile(tmpName, b, opts.Progress, bl); err != nil {
		return stats, err
	}
	stats.Counts = b.counts
	opts.Progress("putting the new database in place at " + path)
	if err := bl.publish(path); err != nil {
		return stats, err
	}
	if err := publish(tmpName, path, old != nil); err != nil {
		return stats, err
	}
	published = true
	return stats, bl.done()
}

// buildFile writes the database b describes into the new file at name,
// with the event log bl as applied, and syncs it.
func buildFile(name string, b *bulkBuilder, progress func(string), bl *bulkLog) error {
	// No fsync while building: the file is nobody's until publish, and a
	// kill leaves only a temporary file the next load removes.
	db, err := openBolt(name, &bolt.Options{
		Timeout:    time.Second,
		NoSync:     true,
		NoGrowSync: true,
		// The list of free pages is written with each commit, so that the
		// published file's first Open need not walk the file to rebuild it.
		FreelistType: bolt.FreelistMapType,
		// Each time the file outgrows the map, bbolt remaps it and first
		// copies every key and value the open transaction holds out of
		// the old map (a third of the load's time at 1M events). Mapping
		// what the file will need from the start spares that; on Linux
		// the map reserves address space, the file grows as written.
		InitialMmapSize: b.mapSize(),
	})
	if err != nil {
		return err
	}
	if err := initDB(db, false); err != nil {
		db.Close()
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keyLogID, bl.id); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyLogApplied, u64(uint64(bl.end)))
	})
	if err != nil {
		db.Close()
		return err
	}
	if err := b.write(db, progress); err != nil {
		db.Close()
		return err
	}
	progress("syncing the new database to disk")
	if err := db.Sync(); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// lockPristine opens and locks an existing target, returning dump.ErrNotEmpty
// when it holds anything but the schema. A missing target gives nil.
func lockPristine(path string, timeout time.Duration) (*bolt.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := settlePendingLog(path, nil); err != nil {
			return nil, err
		}
		if logged, err := logHasRecords(path); err != nil || logged {
			if err == nil {
				err = fmt.Errorf("%s holds the event log of a database that is not at %s: move it away first", logDir(path), path)
			}
			return nil, err
		}
		return nil, nil
	}
	db, err := openBolt(path, &bolt.Options{Timeout: timeout, FreelistType: bolt.FreelistMapType, NoFreelistSync: true})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("open %s: not a recsys database (no meta bucket)", path)
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			isMeta := bytes.Equal(name, bucketMeta)
			c := b.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				if !isMeta || !(bytes.Equal(k, keySchema) || bytes.Equal(k, keyLogID)) {
					return dump.ErrNotEmpty
				}
			}
			if b.Sequence() != 0 {
				return dump.ErrNotEmpty
			}
			return nil
		})
	})
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error {
			return settlePendingLog(path, tx.Bucket(bucketMeta).Get(keyLogID))
		})
	}
	if err == nil {
		// Events acknowledged but not yet applied count as data.
		var logged bool
		if logged, err = logHasRecords(path); err == nil && logged {
			err = dump.ErrNotEmpty
		}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// removeStaleTemps deletes the temporary files (path, infix, a suffix) of
// killed loads or compactions into path. A file whose lock another process
// holds belongs to one still running and is left alone.
func removeStaleTemps(path, infix string) {
	names, _ := filepath.Glob(path + infix + "*")
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(name)
		}
		f.Close()
	}
}

// tempBeside creates the temporary file (path, infix, a random suffix) a
// new database is built in, in path's folder so that it can replace path
// by rename; with keepMode it takes path's permissions, as far as it can.
func tempBeside(path, infix string, keepMode bool) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+infix+"*")
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(path); err == nil && keepMode {
		_ = tmp.Chmod(fi.Mode().Perm())
	}
	name := tmp.Name()
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// publish puts the finished file tmp at path: by rename over a pristine
// target (whose lock the caller holds), or by a link where no file was,
// which fails rather than replace a file another process created there
// meanwhile. The folder is synced so the new name survives a crash.
func publish(tmp, path string, replace bool) error {
	if replace {
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		return syncDir(filepath.Dir(path))
	}
	err := os.Link(tmp, path)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s appeared while it was being written; it was left as it is", path)
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EXDEV):
		// A file system without hard links: rename, which cannot refuse
		// to replace (the window is the instant since the Stat above).
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s appeared while it was being written; it was left as it is", path)
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if err := os.Remove(tmp); err != nil {
			return err
		}
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
