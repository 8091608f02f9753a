package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// TestStore_ModelBlob_checksum: a stored model reads back as written; a
// flipped byte anywhere in it is reported as record.ErrCorruptModel; a blob
// stored before blobs were sealed still reads.
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
			if at < len(record.BlobMagic) { // a damaged magic reads as an unsealed blob: damage the body too
				v[len(v)-1] ^= 1
			}
			return b.Put(modelKey("m", "v000001"), v)
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ModelBlob(ctx, "m", "v000001")
		if at >= len(record.BlobMagic) && !errors.Is(err, record.ErrCorruptModel) {
			t.Errorf("byte %d flipped: err %v, want record.ErrCorruptModel", at, err)
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

// TestStore_ModelBlob_large: blobs past readMapped's 1 MiB threshold (read
// with the kernel's readahead) come back byte for byte from a reopened
// file, read concurrently as a server's start reads them, whatever their
// alignment in the map; a flipped byte in the middle of one is still
// record.ErrCorruptModel, and the store goes on writing and reading after.
func TestStore_ModelBlob_large(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTestStore(t, path, Options{Now: fixedClock})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	blobs := make([][]byte, 6)
	for k := range blobs {
		blobs[k] = make([]byte, 3<<20+k*4099+1)
		for i := range blobs[k] {
			blobs[k][i] = byte(rng.Uint32())
		}
		if err := s.PutModel(ctx, api.ModelInfo{Name: fmt.Sprintf("m%d", k), Version: "v000001"}, blobs[k]); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = openTestStore(t, path, Options{Now: fixedClock})
	errs := make([]error, len(blobs))
	var wg sync.WaitGroup
	for k := range blobs {
		wg.Go(func() {
			got, err := s.ModelBlob(ctx, fmt.Sprintf("m%d", k), "v000001")
			if err == nil && !bytes.Equal(got, blobs[k]) {
				err = fmt.Errorf("%d bytes read back, not the %d written", len(got), len(blobs[k]))
			}
			errs[k] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketModels)
		v := append([]byte(nil), b.Get(modelKey("m2", "v000001"))...)
		v[len(v)/2] ^= 0x10
		return b.Put(modelKey("m2", "v000001"), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ModelBlob(ctx, "m2", "v000001"); !errors.Is(err, record.ErrCorruptModel) {
		t.Fatalf("a byte flipped in the middle of a large blob: err %v, want record.ErrCorruptModel", err)
	}
	mustAdd(t, s, ev("a", "x", "view"))
	if got, err := s.ModelBlob(ctx, "m5", "v000001"); err != nil || !bytes.Equal(got, blobs[5]) {
		t.Fatalf("after a write: %v, equal=%v", err, bytes.Equal(got, blobs[5]))
	}
	// The large values are read from the file (pread), not copied out of
	// the map; a slice that is not in the map is not read from the file.
	err = s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketModels).Get(modelKey("m4", "v000001"))
		if got, ok := s.preadValue(tx, v); !ok || !bytes.Equal(got, v) {
			return fmt.Errorf("pread of m4: ok %v, equal %v", ok, bytes.Equal(got, v))
		}
		if got, ok := s.preadValue(tx, slices.Clone(v)); ok {
			return fmt.Errorf("a copy of m4 outside the map read as %d bytes from the file", len(got))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Prefetch reads the whole file and its Warmup says how far it is until
// it is done; a file this small fits the memory, so readiness waits for it.
// A file of at most prefetchAtOnce is read before Prefetch returns.
func TestStore_Prefetch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s := openTestStore(t, path, Options{Now: fixedClock})
	if w := s.Prefetch(); w != nil {
		t.Fatalf("a new store's file: Warmup %+v, want it read at once", w)
	}
	blob := make([]byte, prefetchAtOnce+(6<<20))
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	if err := s.PutModel(context.Background(), api.ModelInfo{Name: "m", Version: "v000001"}, blob); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	w := s.Prefetch()
	if w == nil {
		t.Fatal("no Warmup for a file of a few MB")
	}
	if err := w.Err(); err != nil && !strings.Contains(err.Error(), fmt.Sprintf("of %d MB", fi.Size()>>20)) {
		t.Fatalf("Warmup.Err while reading: %v, want the file's size named", err)
	}
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end in 10 s")
	}
	if err := w.Err(); err != nil || w.read.Load() != fi.Size() {
		t.Fatalf("after the read: %v, %d bytes read of %d", err, w.read.Load(), fi.Size())
	}
}
