package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// StoredSchema is the schema version the open file holds: SchemaVersion
// once a writable open has migrated it, an older one opened read-only.
func (s *Store) StoredSchema(ctx context.Context) (int, error) {
	var v uint64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v = getU64(tx.Bucket(bucketMeta).Get(keySchema))
		return nil
	})
	return int(v), err
}

// FileSchema reads the schema version of the bbolt file at path without
// opening it as a store: nothing is migrated or written. A file another
// process has open for writing (a running server) cannot be read.
func FileSchema(path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return 0, fmt.Errorf("%s is locked by another process (a running server answers GET /version)", path)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	defer db.Close()
	var v uint64
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("%s is not a recsys database (no meta bucket)", path)
		}
		v = getU64(meta.Get(keySchema))
		return nil
	})
	return int(v), err
}
