package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/recsys-engine/recsys/api"
)

// Online backups (GET /admin/backup, `recsys backup`). The server applies
// the event log's tail first and then streams one read transaction's copy
// of the bbolt file (Tx.WriteTo): a file that holds every event
// acknowledged before the backup began and opens as it is, with no event
// log beside it. Writers go on meanwhile; the pages the transaction reads
// stay allocated until it ends, so a long backup under heavy writes grows
// the live file by what was rewritten meanwhile, and a commit that must
// remap the file waits for the copy to end. The receiver writes the
// copy to a temporary file beside the target, checks it, gives it a log
// of its own and only then puts it in place (ReceiveBackup).

// backupTempInfix names the temporary file a backup is received in: the
// target's name, this, and a random suffix.
const backupTempInfix = ".partial-"

// Backup writes a consistent copy of the database: it applies the event
// log's tail (waiting no longer than ctx allows), opens a read
// transaction, calls start with the copy's size in bytes and writes the
// copy to the writer start returns. It returns the bytes written. An error
// before start is called means nothing was written; after, the copy is cut
// short. ctx bounds the wait for the applier only: the copy itself runs as
// long as the writer takes it.
func (s *Store) Backup(ctx context.Context, start func(size int64) (io.Writer, error)) (int64, error) {
	if err := s.refuseUnappliedTail(); err != nil {
		return 0, err
	}
	// syncTail applies every event appended before it takes the append
	// lock, acknowledged or not: an acknowledged event was appended before
	// its answer, so before this call.
	done := make(chan error, 1)
	go func() { done <- s.syncTail(context.WithoutCancel(ctx)) }()
	select {
	case err := <-done:
		if err != nil {
			return 0, err
		}
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	var n int64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		w, err := start(tx.Size())
		if err != nil {
			return err
		}
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// BackupInfo describes a backup ReceiveBackup wrote.
type BackupInfo struct {
	Bytes  int64      // as received
	Counts api.Counts // the copy's counters
	Schema uint64     // its schema version
}

// ReceiveBackup writes the copy r streams (size bytes; negative: unknown)
// to path. It goes to a temporary file beside path (name, ".partial-",
// random), which is fsynced, opened with bbolt and checked page by page,
// given an event log of its own (a new log id, nothing applied: every event
// is in the file) and only then renamed to path, the folder synced: a
// receive cut short or killed never leaves a file at path. An existing
// path is refused unless replace; a path with an event log beside it
// (path.events) is always refused, since the copy would be opened with
// another database's log.
func ReceiveBackup(r io.Reader, size int64, path string, replace bool) (BackupInfo, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // the rename replaces the file a link names
	}
	if err := CheckBackupTarget(path, replace); err != nil {
		return BackupInfo{}, err
	}
	removeStaleTemps(path, backupTempInfix)
	tmp, err := tempBeside(path, backupTempInfix, false)
	if err != nil {
		return BackupInfo{}, err
	}
	published := false
	defer func() {
		if !published {
			os.Remove(tmp)
		}
	}()
	n, err := receive(r, tmp)
	if err != nil {
		return BackupInfo{}, err
	}
	if size >= 0 && n != size {
		return BackupInfo{}, fmt.Errorf("the backup stream ended after %d of its %d bytes", n, size)
	}
	info, err := sealBackup(tmp)
	if err != nil {
		return BackupInfo{}, err
	}
	info.Bytes = n
	if err := publish(tmp, path, replace); err != nil {
		return BackupInfo{}, err
	}
	published = true
	return info, nil
}

// CheckBackupTarget fails when ReceiveBackup would refuse path: it exists
// (unless replace) or is a folder, or an event log lies beside it.
func CheckBackupTarget(path string, replace bool) error {
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a folder", path)
		}
		if !replace {
			return fmt.Errorf("%s exists: choose another file, or pass --force to replace it", path)
		}
	}
	if _, err := os.Stat(logDir(path)); err == nil {
		return fmt.Errorf("%s holds the event log of a database at %s, which a backup there would be opened with: choose another file or move that folder away", logDir(path), path)
	}
	return nil
}

// receive copies r into the file tmp and fsyncs it. The file is locked
// meanwhile, so that another receive's removeStaleTemps leaves it alone.
func receive(r io.Reader, tmp string) (int64, error) {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err != nil {
		return n, fmt.Errorf("the backup stream broke after %d bytes: %w", n, err)
	}
	if err := f.Sync(); err != nil {
		return n, err
	}
	return n, f.Close()
}

// sealBackup checks the received copy at tmp (every page reachable and
// accounted for, a recsys database of a schema this binary reads) and
// gives it an event log of its own. The server's copy names the server's
// log and the position it applied; the copy holds every event it applied,
// and a log of a new id that starts empty is what opens with it.
func sealBackup(tmp string) (BackupInfo, error) {
	var info BackupInfo
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second, FreelistType: bolt.FreelistMapType})
	if err != nil {
		if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
			return info, fmt.Errorf("the backup is not a whole bbolt file: %w", err)
		}
		return info, fmt.Errorf("opening the backup: %w", err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		var problems []error
		for err := range tx.Check() {
			problems = append(problems, err)
		}
		if len(problems) > 0 {
			return fmt.Errorf("the backup is damaged (%d problems, the first: %w)", len(problems), problems[0])
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("the backup is not a recsys database (no meta bucket)")
		}
		info.Schema = getU64(meta.Get(keySchema))
		if info.Schema < 2 || info.Schema > SchemaVersion {
			return fmt.Errorf("the backup has schema version %d, this binary reads versions 2 to %d", info.Schema, SchemaVersion)
		}
		info.Counts = api.Counts{Users: counter(meta, counterUsers), Items: counter(meta, counterItems),
			Interactions: counter(meta, counterPairs), Positives: counter(meta, counterPositives), Events: counter(meta, counterEvents)}
		return nil
	})
	if err != nil {
		return info, err
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if err := meta.Delete(keyLogApplied); err != nil {
			return err
		}
		return newLogID(meta)
	}); err != nil {
		return info, err
	}
	return info, db.Close()
}
