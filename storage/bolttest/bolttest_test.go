package bolttest

import (
	"bytes"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func write(t *testing.T, path string, kv map[string]string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		for k, v := range kv {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDiff: equal files give no difference; a changed value, a missing
// key and a missing bucket each give one; a normalizer that maps the
// changed values to one value hides only that difference.
func TestDiff(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]map[string]string{
		"a": {"k1": "v1", "k2": "v2"},
		"b": {"k1": "v1", "k2": "v2"},
		"c": {"k1": "v1", "k2": "XX"},
		"d": {"k1": "v1"},
	}
	d := map[string]Dump{}
	for name, kv := range paths {
		write(t, filepath.Join(dir, name), kv)
		d[name] = File(t, filepath.Join(dir, name))
	}
	if got := d["a"]["b"]; len(got.Keys) != 2 || string(got.Keys[1]) != "k2" || string(got.Vals[1]) != "v2" {
		t.Fatalf("dump of a = %+v", got)
	}
	if diffs := Diff(d["a"], d["b"], nil); diffs != nil {
		t.Fatalf("equal files: %v", diffs)
	}
	if diffs := Diff(d["a"], d["c"], nil); len(diffs) != 1 {
		t.Fatalf("changed value: %v", diffs)
	}
	if diffs := Diff(d["a"], d["d"], nil); len(diffs) != 1 {
		t.Fatalf("missing key: %v", diffs)
	}
	if diffs := Diff(d["a"], Dump{}, nil); len(diffs) != 1 {
		t.Fatalf("missing bucket: %v", diffs)
	}
	same := func(bucket string, v []byte) []byte {
		if bucket == "b" && (bytes.Equal(v, []byte("v2")) || bytes.Equal(v, []byte("XX"))) {
			return nil
		}
		return v
	}
	if diffs := Diff(d["a"], d["c"], same); diffs != nil {
		t.Fatalf("normalized values: %v", diffs)
	}
}
