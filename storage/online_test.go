package storage

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"recsys/api"
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
