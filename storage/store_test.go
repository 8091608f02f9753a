package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
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

// freelistSynced reads the file's newest bbolt meta page and reports
// whether it points at a written list of free pages (bbolt's meta layout:
// a 16-byte page header, then magic, version, page size and flags as
// 4 bytes each, the root bucket in 16, the freelist page id, the page
// count and the transaction id in 8 bytes each, little-endian).
func freelistSynced(tb testing.TB, path string) bool {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	pageSize := int(binary.LittleEndian.Uint32(b[24:]))
	newest, synced := uint64(0), false
	for _, off := range []int{0, pageSize} {
		m := b[off:]
		if txid := binary.LittleEndian.Uint64(m[64:]); txid >= newest {
			newest, synced = txid, binary.LittleEndian.Uint64(m[48:]) != math.MaxUint64
		}
	}
	return synced
}

// TestStore_Close_writesFreelist: commits leave the free-page list out
// (fast writes), Close writes it so the next Open need not walk the whole
// file, and the next write drops it again (a crash then leaves a file
// whose Open rebuilds the list).
func TestStore_Close_writesFreelist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, ev("a", "x", "view"))
	if freelistSynced(t, path) {
		t.Fatal("a write commit wrote the free-page list")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !freelistSynced(t, path) {
		t.Fatal("Close left no free-page list: the next Open walks every page")
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustAdd(t, s, ev("b", "x", "view"))
	if freelistSynced(t, path) {
		t.Fatal("the list written at Close survived a later write commit")
	}
	if c := mustCounts(t, s); c.Events != 2 {
		t.Fatalf("events after reopen = %d, want 2", c.Events)
	}
}
