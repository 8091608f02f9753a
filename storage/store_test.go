package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/bolttest"
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

// itemPairCounts counts each item's pairs in bbolt, by hand, and reads
// item_pairs, with the whole tail applied first.
func itemPairCounts(t *testing.T, s *Store) (want, got map[uint64]uint64) {
	t.Helper()
	if err := s.applyTail(); err != nil {
		t.Fatal(err)
	}
	want, got = map[uint64]uint64{}, map[uint64]uint64{}
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketPairs).ForEach(func(k, _ []byte) error {
			want[binary.BigEndian.Uint64(k[8:])]++
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bucketItemPairs).ForEach(func(k, v []byte) error {
			got[binary.BigEndian.Uint64(k)] = getU64(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return want, got
}

// TestStore_itemPairsFollowPairs: whatever mix of repeats, negatives and
// values arrives, through the event log and its applier or straight into
// bbolt, and whatever deletes follow, item_pairs holds each item's number
// of pairs, and no entry for an item without one.
func TestStore_itemPairsFollowPairs(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{direct: direct})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
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
			want, got := itemPairCounts(t, s)
			total := uint64(0)
			for _, n := range want {
				total += n
			}
			if c := mustCounts(t, s); uint64(c.Interactions) != total || total == 0 {
				t.Fatalf("%d pairs stored, counter %d", total, c.Interactions)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("item_pairs %v, pairs by item %v", got, want)
			}
			// Each kind of delete takes its pairs off the counts.
			if err := s.DeleteInteraction(ctx, "u1", "i1"); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteUser(ctx, "u2"); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteItem(ctx, "i3"); err != nil {
				t.Fatal(err)
			}
			before := want
			want, got = itemPairCounts(t, s)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after deletes: item_pairs %v, pairs by item %v", got, want)
			}
			// Items are indexed in order of first sight: i0 is 1, so i3 is 4.
			if len(want) == 0 || want[4] != 0 || before[4] == 0 || want[2] >= before[2] {
				t.Fatalf("after deletes: pairs by item %v (before %v)", want, before)
			}
		})
	}
}

// TestStore_Open_version4: a file of schema version 4, whose per-item
// index is item_users (an entry per pair), is read as it is when opened
// read-only, and at its first writable open gets item_pairs, counted from
// item_users, and loses item_users.
func TestStore_Open_version4(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v4.db")
	s := mustOpen(t, path)
	ctx := context.Background()
	mustAdd(t, s, ev("a", "x", "view"), ev("b", "x", "like"), ev("b", "y", "dislike"), ev("c", "z", "view"))
	if err := s.DeleteItem(ctx, "z"); err != nil { // z (3) is known, without pairs
		t.Fatal(err)
	}
	if err := s.applyTail(); err != nil {
		t.Fatal(err)
	}
	// What version 4 wrote: item_users, item | user → flags, and no
	// item_pairs.
	err := s.db.Update(func(tx *bolt.Tx) error {
		old, err := tx.CreateBucket(bucketItemUsers)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketPairs).ForEach(func(k, v []byte) error {
			return old.Put(pairKey(binary.BigEndian.Uint64(k[8:]), binary.BigEndian.Uint64(k)), v[32:33])
		}); err != nil {
			return err
		}
		if err := tx.DeleteBucket(bucketItemPairs); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u64(4))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// x is 1, y 2, z 3 (deleted), 4 never existed.
	idx, want := []uint32{1, 2, 3, 4}, []bool{true, true, false, false}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of version 4: %v", err)
	}
	if got, err := ro.ItemsInteracted(ctx, idx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read-only version 4: ItemsInteracted %v, %v; want %v", got, err, want)
	}
	ro.Close()
	s = mustOpen(t, path)
	defer s.Close()
	err = s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketItemUsers) != nil {
			t.Error("item_users kept after a writable open")
		}
		if v := getU64(tx.Bucket(bucketMeta).Get(keySchema)); v != SchemaVersion {
			t.Errorf("schema %d after a writable open, want %d", v, SchemaVersion)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if wantN, gotN := itemPairCounts(t, s); !reflect.DeepEqual(gotN, wantN) || gotN[1] != 2 || gotN[2] != 1 || len(gotN) != 2 {
		t.Fatalf("migrated item_pairs %v, pairs by item %v; want x (1): 2, y (2): 1", gotN, wantN)
	}
	if got, err := s.ItemsInteracted(ctx, idx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("migrated: ItemsInteracted %v, %v; want %v", got, err, want)
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
