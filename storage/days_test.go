package storage

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
)

// activity returns the per-day counters as day → events, and their sum.
func activity(tb testing.TB, s *Store) (map[string]int64, int64) {
	tb.Helper()
	days, err := s.Activity(context.Background(), 3650)
	if err != nil {
		tb.Fatal(err)
	}
	out, sum := map[string]int64{}, int64(0)
	for _, d := range days {
		out[d.Day] = d.Events
		sum += d.Events
	}
	return out, sum
}

// TestStore_Open_migratesDays: a version 2 file, whose deletes left its
// per-day counters summing to more than its events, is brought to version
// 3 at a writable open: the counters are rebuilt from the live pairs and
// agree with the events counter, and later deletes keep them agreeing.
func TestStore_Open_migratesDays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	s := mustOpen(t, path)
	at := func(u, i string, d int) api.Interaction {
		return api.Interaction{UserID: u, ItemID: i, Type: "view", Timestamp: time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC)}
	}
	mustAdd(t, s, at("a", "x", 1), at("a", "x", 3), at("b", "x", 2), at("b", "y", 2), at("c", "y", 4))
	if err := s.applyTail(); err != nil {
		t.Fatal(err)
	}
	// What version 2 left behind: no pair_days, and a deleted user's 7
	// events still counted on the 9th.
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketPairDays); err != nil {
			return err
		}
		if err := addDay(tx.Bucket(bucketMeta), "20260309", 7); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u64(2))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a version 2 file: %v", err)
	}
	ro.Close()
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, sum := activity(t, s)
	want := map[string]int64{"2026-03-01": 1, "2026-03-02": 2, "2026-03-03": 1, "2026-03-04": 1}
	if c := mustCounts(t, s); sum != c.Events || c.Events != 5 || !reflect.DeepEqual(got, want) {
		t.Fatalf("after migration: per day %v (sum %d), events %d; want %v and 5", got, sum, c.Events, want)
	}
	if err := s.DeleteInteraction(context.Background(), "a", "x"); err != nil {
		t.Fatal(err)
	}
	got, sum = activity(t, s)
	want = map[string]int64{"2026-03-02": 2, "2026-03-04": 1}
	if c := mustCounts(t, s); sum != c.Events || !reflect.DeepEqual(got, want) {
		t.Fatalf("after a delete: per day %v (sum %d), events %d; want %v", got, sum, c.Events, want)
	}
}
