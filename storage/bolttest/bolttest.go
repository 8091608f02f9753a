// Package bolttest compares bbolt files in tests: every bucket's sequence
// and its keys and values in order. It does not import storage, so the
// tests inside package storage can use it as well as those of the command.
package bolttest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Bucket is a bucket's sequence and every key and value, in key order.
type Bucket struct {
	Seq  uint64
	Keys [][]byte
	Vals [][]byte
}

// Dump is every bucket of a database by name.
type Dump map[string]Bucket

// Of reads every bucket of db.
func Of(tb testing.TB, db *bolt.DB) Dump {
	tb.Helper()
	out := Dump{}
	err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			d := Bucket{Seq: b.Sequence()}
			err := b.ForEach(func(k, v []byte) error {
				d.Keys = append(d.Keys, bytes.Clone(k))
				d.Vals = append(d.Vals, bytes.Clone(v))
				return nil
			})
			out[string(name)] = d
			return err
		})
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// File reads every bucket of the database file at path, opened read-only.
func File(tb testing.TB, path string) Dump {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	return Of(tb, db)
}

// Diff lists the differences between a and b: buckets only in one, a
// different sequence or number of keys, and the first three entries of a
// bucket whose keys or values differ. Values are compared after normalize
// (when not nil) maps them, given the bucket's name. No differences: nil.
func Diff(a, b Dump, normalize func(bucket string, v []byte) []byte) []string {
	var diffs []string
	for name := range a {
		if _, ok := b[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("bucket %s only in the first", name))
		}
	}
	for name, db := range b {
		da, ok := a[name]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("bucket %s only in the second", name))
			continue
		}
		if da.Seq != db.Seq {
			diffs = append(diffs, fmt.Sprintf("%s: sequence %d vs %d", name, da.Seq, db.Seq))
		}
		if len(da.Keys) != len(db.Keys) {
			diffs = append(diffs, fmt.Sprintf("%s: %d keys vs %d", name, len(da.Keys), len(db.Keys)))
		}
		bad := 0
		for k := range min(len(da.Keys), len(db.Keys)) {
			va, vb := da.Vals[k], db.Vals[k]
			if normalize != nil {
				va, vb = normalize(name, va), normalize(name, vb)
			}
			if !bytes.Equal(da.Keys[k], db.Keys[k]) || !bytes.Equal(va, vb) {
				if bad++; bad <= 3 {
					diffs = append(diffs, fmt.Sprintf("%s: entry %d: %q=%x vs %q=%x", name, k, da.Keys[k], va, db.Keys[k], vb))
				}
			}
		}
	}
	return diffs
}

// Without is d less the keys of bucket that start with prefix (entries
// that name something of one file only, such as its event log).
func (d Dump) Without(bucket, prefix string) Dump {
	b, ok := d[bucket]
	if !ok {
		return d
	}
	kept := Bucket{Seq: b.Seq}
	for k, key := range b.Keys {
		if !bytes.HasPrefix(key, []byte(prefix)) {
			kept.Keys = append(kept.Keys, key)
			kept.Vals = append(kept.Vals, b.Vals[k])
		}
	}
	out := make(Dump, len(d))
	for name, v := range d {
		out[name] = v
	}
	out[bucket] = kept
	return out
}

// FreelistSynced reads the file's newest bbolt meta page and reports
// whether it points at a written list of free pages; without one, bbolt's
// Open walks every page of the file to rebuild it. bbolt's meta layout: a
// 16-byte page header, then magic, version, page size and flags as 4 bytes
// each, the root bucket in 16, the freelist page id, the page count and
// the transaction id in 8 bytes each, little-endian.
func FreelistSynced(tb testing.TB, path string) bool {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 80)
	if _, err := f.ReadAt(head, 0); err != nil {
		tb.Fatal(err)
	}
	pageSize := int64(binary.LittleEndian.Uint32(head[24:]))
	newest, synced := uint64(0), false
	for _, off := range []int64{0, pageSize} {
		m := make([]byte, 80)
		if _, err := f.ReadAt(m, off); err != nil {
			tb.Fatal(err)
		}
		if txid := binary.LittleEndian.Uint64(m[64:]); txid >= newest {
			newest, synced = txid, binary.LittleEndian.Uint64(m[48:]) != math.MaxUint64
		}
	}
	return synced
}
