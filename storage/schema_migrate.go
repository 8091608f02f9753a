package storage

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/storage/record"
)

// Opening a file checks its schema version (schema.go) and brings an
// older one to SchemaVersion, in one transaction at its first writable
// open.

// initDB creates every bucket of a new file and migrates an older one at a
// writable open; a read-only open only checks the version.
func initDB(db *bolt.DB, readOnly bool) error {
	check := func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("not a recsys database (no meta bucket)")
		}
		return checkSchema(getU64(meta.Get(keySchema)), readOnly)
	}
	if readOnly {
		// Version 2 differs only in what deletes need (pair_days), 3 in
		// having no event log, 4 in its per-item pair index (item_users),
		// 5 in having no order buckets, 6 in having no placements
		// (its lists are read as lists without one).
		return db.View(check)
	}
	return db.Update(func(tx *bolt.Tx) error {
		fresh := tx.Bucket(bucketMeta) == nil
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if fresh {
			if err := meta.Put(keySchema, u64(SchemaVersion)); err != nil {
				return err
			}
		}
		v := getU64(meta.Get(keySchema))
		if v < 1 || v > SchemaVersion {
			return check(tx)
		}
		if v == 1 {
			if err := migrateItemRecords(tx); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", SchemaVersion, err)
			}
		}
		if v <= 2 {
			if err := migrateDays(tx); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", SchemaVersion, err)
			}
		}
		if meta.Get(keyLogID) == nil {
			// A new file, or one of version 1 to 3, from before the event
			// log: the latter has everything applied, so its log starts
			// empty.
			if err := newLogID(meta); err != nil {
				return err
			}
		}
		if err := migrateItemPairs(tx); err != nil {
			return fmt.Errorf("migrating to schema version %d: %w", SchemaVersion, err)
		}
		if v < 6 {
			if err := migrateOrder(tx); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", SchemaVersion, err)
			}
		}
		if v != SchemaVersion {
			if err := meta.Put(keySchema, u64(SchemaVersion)); err != nil {
				return err
			}
		}
		return check(tx)
	})
}

// checkSchema accepts a file of schema version v: this binary's, or, read
// only, an older one from version 2 on. A newer file is refused, since
// this binary would misread what it does not know; so is a version 1 file
// opened read-only, whose item records only a writable open rewrites.
func checkSchema(v uint64, readOnly bool) error {
	switch {
	case v == SchemaVersion:
		return nil
	case v > SchemaVersion:
		return fmt.Errorf("database schema version %d is newer than this binary's %d; run a newer recsys", v, SchemaVersion)
	case v == 0:
		return errors.New("not a recsys database (no schema version)")
	case readOnly && v >= 2:
		return nil
	case readOnly:
		return fmt.Errorf("database schema version %d is older than this binary's %d and is migrated only by a writable open (recsys serve or recsys train on it, after a backup)", v, SchemaVersion)
	}
	return fmt.Errorf("database schema version %d, this binary's %d", v, SchemaVersion)
}

// migrateItemRecords brings the item records of a version 1 file to the
// layout of version 2: the dense index as 8 big-endian bytes, then the
// rest as JSON, where version 1 kept the index in the JSON ("idx"). Early
// version 1 files hold the JSON form; later ones were already written in
// the new form (the schema version was raised after the change), so a
// record already in it is left as it is.
func migrateItemRecords(tx *bolt.Tx) error {
	items := tx.Bucket(bucketItems)
	type rewrite struct{ key, val []byte }
	var out []rewrite
	err := items.ForEach(func(k, v []byte) error {
		if len(v) == 0 || v[0] != '{' {
			return nil // 8 index bytes first: an index below 2^56 starts with 0
		}
		var r itemRecord
		var idx struct {
			Idx *uint64 `json:"idx"`
		}
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("item %q: %w", k, err)
		}
		if err := json.Unmarshal(v, &idx); err != nil || idx.Idx == nil {
			return fmt.Errorf("item %q: a version 1 record without its index", k)
		}
		r.Idx = *idx.Idx
		b, err := r.encode()
		if err != nil {
			return err
		}
		out = append(out, rewrite{bytes.Clone(k), b})
		return nil
	})
	if err != nil {
		return err
	}
	for _, w := range out {
		if err := items.Put(w.key, w.val); err != nil {
			return err
		}
	}
	return nil
}

// migrateItemPairs counts each item's pairs from item_users, the per-item
// index of versions 2–4, into item_pairs and deletes item_users. Its keys
// are item | user, so an item's entries are one run.
func migrateItemPairs(tx *bolt.Tx) error {
	old := tx.Bucket(bucketItemUsers)
	if old == nil {
		return nil
	}
	counts := tx.Bucket(bucketItemPairs)
	c := old.Cursor()
	k, _ := c.First()
	for k != nil {
		item, n := bytes.Clone(k[:8]), uint64(0)
		for ; k != nil && bytes.Equal(k[:8], item); k, _ = c.Next() {
			n++
		}
		if err := counts.Put(item, u64(n)); err != nil {
			return err
		}
	}
	return tx.DeleteBucket(bucketItemUsers)
}

// migrateOrder fills user_order and item_order from the users and items
// of a file of version 5 or older: their keys sorted first, since bbolt
// inserts out of key order slowly, and pages filled.
func migrateOrder(tx *bolt.Tx) error {
	for _, b := range []struct{ from, to []byte }{{bucketUsers, bucketUserOrder}, {bucketItems, bucketItemOrder}} {
		var keys [][]byte
		if err := tx.Bucket(b.from).ForEach(func(k, _ []byte) error {
			keys = append(keys, record.OrderKey(string(k)))
			return nil
		}); err != nil {
			return err
		}
		slices.SortFunc(keys, bytes.Compare)
		to := tx.Bucket(b.to)
		to.FillPercent = 1.0
		for _, k := range keys {
			if err := to.Put(k, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// newLogID names the database's event log, so that a log beside another
// database's file is never replayed into it.
func newLogID(meta *bolt.Bucket) error {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return err
	}
	return meta.Put(keyLogID, id)
}
