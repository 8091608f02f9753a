package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
	"recsys/storage/bolttest"
)

func mustOpenStore(tb testing.TB) *Store {
	tb.Helper()
	s := mustOpen(tb, filepath.Join(tb.TempDir(), "test.db"))
	tb.Cleanup(func() { s.Close() })
	return s
}

// mustOpen opens the store at path with the default options; the caller
// closes it.
func mustOpen(tb testing.TB, path string) *Store {
	tb.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func ev(user, item, typ string) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ}
}

func evv(user, item, typ string, v float64) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ, Value: v, HasValue: true}
}

func mustAdd(tb testing.TB, s *Store, evs ...api.Interaction) {
	tb.Helper()
	if _, err := s.AddInteractions(context.Background(), evs); err != nil {
		tb.Fatal(err)
	}
}

func mustCounts(tb testing.TB, s *Store) api.Counts {
	tb.Helper()
	c, err := s.Counts(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestStore_Open_reopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	s := mustOpen(t, path)
	mustAdd(t, s, ev("a", "x", "view"))
	if _, err := Open(path, Options{Timeout: 50 * time.Millisecond}); err == nil {
		t.Fatal("a second open of a locked database succeeded")
	}
	s.Close()
	s = mustOpen(t, path)
	defer s.Close()
	if c := mustCounts(t, s); c.Events != 1 {
		t.Fatalf("events after reopen = %d, want 1", c.Events)
	}
}

func TestStore_Open_readOnlyRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	s := mustOpen(t, path)
	mustAdd(t, s, ev("a", "x", "view"))
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.AddInteractions(context.Background(), []api.Interaction{ev("b", "y", "view")})
	if api.ErrorCode(err) != api.CodeUnavailable {
		t.Fatalf("write to read-only store err = %v, want unavailable", err)
	}
}

// TestStore_AddInteractions_itemIndexFollowsPairs: whatever mix of repeats,
// negatives and values arrives, the item → user index holds exactly the
// pairs, each with the pair's current flags (repeats that change no flag
// skip the index write).
func TestStore_AddInteractions_itemIndexFollowsPairs(t *testing.T) {
	s := mustOpenStore(t)
	types := []string{"view", "view", "like", "dislike", "click", "view"}
	for round := 0; round < 3; round++ {
		var evs []api.Interaction
		for k := 0; k < 60; k++ {
			e := ev(fmt.Sprintf("u%d", k%7), fmt.Sprintf("i%d", (k*round+k/3)%11), types[(k+round)%len(types)])
			evs = append(evs, e)
		}
		mustAdd(t, s, evs...)
	}
	mustAdd(t, s, evv("u1", "i1", "rating", 5), evv("u1", "i1", "rating", 1))
	err := s.db.View(func(tx *bolt.Tx) error {
		pairs, index := tx.Bucket(bucketPairs), tx.Bucket(bucketItemUsers)
		n := 0
		err := pairs.ForEach(func(k, v []byte) error {
			n++
			got := index.Get(pairKey(binary.BigEndian.Uint64(k[8:]), binary.BigEndian.Uint64(k)))
			if len(got) != 1 || got[0] != v[32] {
				t.Errorf("pair %x: index holds %v, pair flags %d", k, got, v[32])
			}
			return nil
		})
		if m := index.Stats().KeyN; m != n {
			t.Errorf("index has %d entries for %d pairs", m, n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func freelistSynced(tb testing.TB, path string) bool { return bolttest.FreelistSynced(tb, path) }

// TestStore_writesFreelist: every commit writes the free-page list, so
// that no Open, after a Close or a crash, walks the whole file to rebuild
// it; a file whose last writer left it out (a file of an older binary,
// which committed without it) gets it at its first writable Open.
func TestStore_writesFreelist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, ev("a", "x", "view"))
	if err := s.syncTail(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !freelistSynced(t, path) {
		t.Fatal("a write commit left the free-page list out")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// An older binary's commit: no list.
	old, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketJobs).Put([]byte("j"), []byte("{}")) }); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if freelistSynced(t, path) {
		t.Fatal("a commit with NoFreelistSync wrote the list: the test proves nothing")
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !freelistSynced(t, path) {
		t.Fatal("Open left a file without a free-page list as it was")
	}
	if c := mustCounts(t, s); c.Events != 1 {
		t.Fatalf("events after reopen = %d, want 1", c.Events)
	}
}
