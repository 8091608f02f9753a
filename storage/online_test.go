package storage

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
)

// TestStore_recentIndex_reopen: the in-memory index of recent lists is
// rebuilt from the log at the first use after an open, so a list shown
// before a restart is credited by the window after it; a list older than
// the window is not indexed at all.
func TestStore_recentIndex_reopen(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "r.db")
	opts := Options{Now: func() time.Time { return now }}
	s := openTestStore(t, path, opts)
	old, fresh := now.Add(-2*time.Hour), now.Add(-time.Minute)
	imps := []api.Impression{
		{ID: api.NewRecommendationID(old, "p", 1), UserID: "u", Model: "itemknn", Items: []string{"a", "b"}, At: old},
		{ID: api.NewRecommendationID(fresh, "p", 2), UserID: "u", Model: "ease", Items: []string{"c"}, At: fresh},
	}
	if err := s.PutImpressions(ctx, imps); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, path, opts)
	defer s.Close()
	idx, err := s.recentIndex(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := idx.lookup("u", 0, now.UnixNano()); len(got) != 1 || got[0] != imps[1].ID {
		t.Fatalf("indexed after the reopen: %v, want only the list of a minute ago", got)
	}
	got, err := s.Attribute(ctx, []api.Touch{{UserID: "u", ItemID: "c", At: now}}, DefaultRecentWindow)
	if err != nil || len(got) != 1 || got[0].Model != "ease" || !got[0].Click {
		t.Fatalf("Attribute after the reopen = %+v, %v; want the ease list credited", got, err)
	}
	// A longer window rebuilds the index from the log.
	got, err = s.Attribute(ctx, []api.Touch{{UserID: "u", ItemID: "b", At: now}}, 3*time.Hour)
	if err != nil || len(got) != 1 || got[0].Model != "itemknn" || got[0].Position != 1 {
		t.Fatalf("Attribute with a 3 h window = %+v, %v; want the itemknn list credited", got, err)
	}
}

// TestStore_impressionLogFilled: the log's keys are times, so its pages
// are written full: 20,000 lists of 10 items, written 400 at a time in
// any order within a write, allocate at most a tenth more than their bytes
// (at bbolt's default of half-full pages, 314 bytes a list against 146).
func TestStore_impressionLogFilled(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, filepath.Join(t.TempDir(), "f.db"), Options{})
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	for range 50 {
		imps := make([]api.Impression, 400)
		for k := range imps {
			seq++
			at = at.Add(time.Millisecond)
			items := make([]string, 10)
			for i := range items {
				items[i] = fmt.Sprintf("i%d", (int(seq)*7+i*131)%27000)
			}
			// Reversed within the write: the order of a flush's lists does not matter.
			imps[len(imps)-1-k] = api.Impression{ID: api.NewRecommendationID(at, "ab12cd34-", seq),
				UserID: fmt.Sprintf("u%d", seq%1000), Model: "kunn-i", ModelVersion: "v000123", Items: items, At: at}
		}
		if err := s.PutImpressions(ctx, imps); err != nil {
			t.Fatal(err)
		}
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketImps).Stats()
		if st.KeyN != 20_000 || st.LeafAlloc > st.LeafInuse*11/10 {
			t.Errorf("%d lists: leaf pages hold %d bytes of %d allocated, want at least 10/11 of them used", st.KeyN, st.LeafInuse, st.LeafAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStore_FreeBytes: the lists a pruning deletes leave their pages free
// in the file, counted by FreeBytes; Compact then removes them.
func TestStore_FreeBytes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.db")
	s := openTestStore(t, path, Options{})
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	imps := make([]api.Impression, 20_000)
	for k := range imps {
		at = at.Add(time.Millisecond)
		imps[k] = api.Impression{ID: api.NewRecommendationID(at, "f", uint64(k)), UserID: "u1", Model: "itemknn",
			Items: []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9", "i10"}, At: at}
	}
	if err := s.PutImpressions(ctx, imps); err != nil {
		t.Fatal(err)
	}
	kept := s.FreeBytes()
	if n, err := s.PruneImpressions(ctx, at.Add(time.Second), len(imps)); err != nil || n != len(imps) {
		t.Fatalf("PruneImpressions: %d, %v", n, err)
	}
	// One more write, so that the pages the pruning freed are no longer
	// pending for an open reader.
	if err := s.PutImpressions(ctx, []api.Impression{{ID: api.NewRecommendationID(at.Add(time.Hour), "f", 1), UserID: "u1", Model: "itemknn", Items: []string{"i1"}, At: at.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	// 20,000 lists of 10 items are about 3 MB of leaf pages; the writes
	// since reuse some of them.
	if free := s.FreeBytes(); free-kept < 1<<20 {
		t.Fatalf("free bytes %d after pruning 20,000 lists, %d before: want 1 MiB more at least", free, kept)
	}
	size := s.Size()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, after, err := Compact(path, time.Second); err != nil || size-after < 1<<20 {
		t.Fatalf("Compact: %d bytes from %d, %v; want 1 MiB less at least", after, size, err)
	}
}

// The index of recent lists keeps a user's lists of the window, oldest
// leaving first, and no list without a user (those are credited only by
// their id): 3,000 lists a second apart, a 10-minute window.
func TestRecentIndex_windowAndAnonymous(t *testing.T) {
	r := &recentIndex{keep: 10 * time.Minute, byUser: map[string][]recentEntry{}}
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for k := range 3000 {
		at := t0 + int64(k)*int64(time.Second)
		r.push(recentEntry{user: "u", id: fmt.Sprint("u", k), at: at})
		r.push(recentEntry{user: "", id: fmt.Sprint("a", k), at: at})
	}
	got := r.lookup("u", 0, math.MaxInt64)
	if len(got) != 601 || got[0] != "u2999" || got[600] != "u2399" {
		t.Fatalf("u's lists: %d, from %v to %v; want the 601 of the last 10 minutes, newest first", len(got), got[0], got[len(got)-1])
	}
	if anon := r.lookup("", 0, math.MaxInt64); len(anon) != 0 || len(r.byUser) != 1 {
		t.Fatalf("lists without a user indexed: %d (users %d)", len(anon), len(r.byUser))
	}
}
