package storage

import (
	"bytes"
	"context"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
)

// TestStore_ModelBlob_checksum: a stored model reads back as written; a
// flipped byte anywhere in it is reported as ErrCorruptModel; a blob stored
// before blobs were sealed still reads.
func TestStore_ModelBlob_checksum(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	blob := bytes.Repeat([]byte("model bytes "), 20)
	info := api.ModelInfo{Name: "m", Version: "v000001"}
	if err := s.PutModel(ctx, info, blob); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ModelBlob(ctx, "m", "v000001"); err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("read back: %v, equal=%v", err, bytes.Equal(got, blob))
	}
	for _, at := range []int{0, 5, 9, 100, len(blob) + 7} { // magic, checksum, body
		err := s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketModels)
			v := append([]byte(nil), b.Get(modelKey("m", "v000001"))...)
			v[at] ^= 1
			if at < len(blobMagic) { // a damaged magic reads as an unsealed blob: damage the body too
				v[len(v)-1] ^= 1
			}
			return b.Put(modelKey("m", "v000001"), v)
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ModelBlob(ctx, "m", "v000001")
		if at >= len(blobMagic) && !errors.Is(err, ErrCorruptModel) {
			t.Errorf("byte %d flipped: err %v, want ErrCorruptModel", at, err)
		}
		if err == nil && bytes.Equal(got, blob) {
			t.Errorf("byte %d flipped: the original blob came back", at)
		}
		if err := s.PutModel(ctx, info, blob); err != nil {
			t.Fatal(err)
		}
	}
	legacy := []byte{1, 3, 'k', 'n', 'n', 9, 9}
	err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketModels).Put(modelKey("old", "v1"), legacy) })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ModelBlob(ctx, "old", "v1"); err != nil || !bytes.Equal(got, legacy) {
		t.Fatalf("unsealed blob: %q, %v", got, err)
	}
}
