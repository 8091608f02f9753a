package storage

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
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

// TestStore_Activity_afterDeletes: deleting a user, an interaction or an
// item takes their events off the days they happened on, repeats on later
// days (in or out of order, in one batch or several) included, so the
// per-day counters always sum to the events counter, and a day left with
// no events disappears.
func TestStore_Activity_afterDeletes(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	at := func(u, i string, d int) api.Interaction {
		return api.Interaction{UserID: u, ItemID: i, Type: "view", Timestamp: time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC)}
	}
	mustAdd(t, s, at("a", "x", 1), at("a", "x", 2), at("a", "x", 2), at("a", "y", 3), at("b", "x", 1))
	mustAdd(t, s, at("b", "y", 4), at("b", "y", 2), at("b", "y", 4), at("c", "z", 5), at("c", "x", 1))
	mustAdd(t, s, at("a", "x", 5), at("c", "z", 6))
	check := func(step string, want map[string]int64) {
		t.Helper()
		got, sum := activity(t, s)
		if c := mustCounts(t, s); sum != c.Events {
			t.Errorf("%s: per-day sum %d, events %d (%v)", step, sum, c.Events, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: per day %v, want %v", step, got, want)
		}
	}
	check("before deletes", map[string]int64{"2026-03-01": 3, "2026-03-02": 3, "2026-03-03": 1,
		"2026-03-04": 2, "2026-03-05": 2, "2026-03-06": 1})
	if err := s.DeleteUser(ctx, "a"); err != nil { // x on 1, 2, 2, 5; y on 3
		t.Fatal(err)
	}
	check("after DeleteUser(a)", map[string]int64{"2026-03-01": 2, "2026-03-02": 1,
		"2026-03-04": 2, "2026-03-05": 1, "2026-03-06": 1})
	if err := s.DeleteInteraction(ctx, "b", "y"); err != nil { // on 4, 2, 4
		t.Fatal(err)
	}
	check("after DeleteInteraction(b, y)", map[string]int64{"2026-03-01": 2, "2026-03-05": 1, "2026-03-06": 1})
	if err := s.DeleteItem(ctx, "z"); err != nil { // c on 5, 6
		t.Fatal(err)
	}
	check("after DeleteItem(z)", map[string]int64{"2026-03-01": 2})
	mustAdd(t, s, at("b", "x", 7)) // a repeat on a later day, after the deletes
	if err := s.DeleteInteraction(ctx, "b", "x"); err != nil {
		t.Fatal(err)
	}
	check("after b x again and its delete", map[string]int64{"2026-03-01": 1})
}

// TestStore_Open_migratesDays: a version 2 file, whose deletes left its
// per-day counters summing to more than its events, is brought to version
// 3 at a writable open: the counters are rebuilt from the live pairs and
// agree with the events counter, and later deletes keep them agreeing.
func TestStore_Open_migratesDays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(u, i string, d int) api.Interaction {
		return api.Interaction{UserID: u, ItemID: i, Type: "view", Timestamp: time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC)}
	}
	mustAdd(t, s, at("a", "x", 1), at("a", "x", 3), at("b", "x", 2), at("b", "y", 2), at("c", "y", 4))
	if err := s.applyTail(); err != nil {
		t.Fatal(err)
	}
	// What version 2 left behind: no pair_days, and a deleted user's 7
	// events still counted on the 9th.
	err = s.db.Update(func(tx *bolt.Tx) error {
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
