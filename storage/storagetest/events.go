package storagetest

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// The contract on ingest: the counters, the relevance policy, all-or-nothing
// batches and event times.

func testCounts(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"), Ev("a", "x", "view"), Ev("a", "y", "click"), Ev("b", "x", "purchase"))
	if got, want := MustCounts(t, s), (api.Counts{Users: 2, Items: 2, Interactions: 3, Positives: 3, Events: 4}); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	if u := mustUser(t, s, "a"); u.Items != 2 || u.Positives != 2 || u.Events != 3 {
		t.Fatalf("user a = %+v, want 2 items, 2 positives, 3 events", u)
	}
	if it := mustItem(t, s, "x"); it.Positives != 2 {
		t.Fatalf("item x popularity = %d, want 2", it.Positives)
	}
	if n, err := s.AddInteractions(bg, nil); err != nil || n != 0 {
		t.Fatalf("empty batch = %d, %v", n, err)
	}
}

// names maps dense item indices to ids, sorted.
func names(tb testing.TB, s backend.Store, idx []uint32) []string {
	tb.Helper()
	cat, err := s.Catalogue(bg)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, i := range idx {
		out = append(out, cat.ItemIDs[i])
	}
	sort.Strings(out)
	return out
}

func testPolicy(t *testing.T, open Opener) {
	s := open(t, Options{})
	// rating>=4 in the default policy: 3 is not relevant, 5 is.
	MustAdd(t, s, Evv("a", "low", "rating", 3), Evv("a", "high", "rating", 5), Ev("a", "hated", "view"))
	MustAdd(t, s, Ev("a", "hated", "dislike"))
	prof, err := s.Profile(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, s, prof.Positive); !reflect.DeepEqual(got, []string{"high"}) {
		t.Errorf("positive = %v, want [high]", got)
	}
	if got := names(t, s, prof.Negative); !reflect.DeepEqual(got, []string{"hated"}) {
		t.Errorf("negative = %v, want [hated]", got)
	}
	if got := names(t, s, prof.Consumed); !reflect.DeepEqual(got, []string{"hated", "high", "low"}) {
		t.Errorf("consumed = %v, want all three", got)
	}
	if c := MustCounts(t, s); c.Positives != 1 {
		t.Errorf("positives = %d, want 1 (the dislike revoked the view)", c.Positives)
	}
	// A later positive event clears the negative one.
	MustAdd(t, s, Ev("a", "hated", "like"))
	if c := MustCounts(t, s); c.Positives != 2 {
		t.Errorf("positives after like = %d, want 2", c.Positives)
	}
	// A custom policy: the store applies the one it was opened with.
	pol, err := api.ParsePolicy("purchase,rating>=2")
	if err != nil {
		t.Fatal(err)
	}
	p := open(t, Options{Policy: pol})
	MustAdd(t, p, Evv("a", "x", "rating", 1), Ev("a", "y", "purchase"), Evv("b", "x", "rating", 2))
	if c := MustCounts(t, p); c.Positives != 2 || c.Events != 3 {
		t.Errorf("custom policy counts = %+v, want 2 positives of 3 events", c)
	}
	if _, err := p.AddInteractions(bg, []api.Interaction{Ev("a", "x", "like")}); api.ErrorCode(err) != api.CodeInvalid {
		t.Errorf("a type outside the policy: err = %v, want invalid", err)
	}
}

func testAllOrNothing(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"))
	before := MustCounts(t, s)
	_, err := s.AddInteractions(bg, []api.Interaction{Ev("b", "y", "view"), Ev("c", "z", "teleport")})
	if api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("err = %v, want invalid", err)
	}
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Details[0].Field != "interactions[1].type" {
		t.Fatalf("err = %#v, want the field interactions[1].type named", err)
	}
	if after := MustCounts(t, s); after != before {
		t.Fatalf("counts changed by a rejected batch: %+v → %+v", before, after)
	}
	if _, err := s.User(bg, "b"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("user b of a rejected batch: err = %v, want not_found", err)
	}
	// A cancelled request stores nothing either.
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := s.AddInteractions(ctx, []api.Interaction{Ev("d", "x", "view")}); err == nil {
		t.Fatal("a cancelled batch was stored")
	}
	if after := MustCounts(t, s); after != before {
		t.Fatalf("counts changed by a cancelled batch: %+v → %+v", before, after)
	}
	// Indices taken by a rejected batch are not skipped: the next new
	// user and item get the next ones.
	MustAdd(t, s, Ev("e", "w", "view"))
	snap, err := s.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.UserIDs, []string{"", "a", "e"}) || !reflect.DeepEqual(snap.ItemIDs, []string{"", "x", "w"}) {
		t.Fatalf("ids = %q / %q, want dense from 1 without gaps", snap.UserIDs, snap.ItemIDs)
	}
}

func testTimestamps(t *testing.T, open Opener) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.UTC)
	s := open(t, Options{Now: func() time.Time { return now }})
	early := time.Date(2026, 4, 1, 8, 0, 0, 987654321, time.UTC)
	MustAdd(t, s, api.Interaction{UserID: "a", ItemID: "x", Type: "view", Timestamp: early}, Ev("a", "y", "view"))
	u := mustUser(t, s, "a")
	if !u.CreatedAt.Equal(early) || !u.LastSeen.Equal(now) {
		t.Fatalf("user a created %v, last seen %v; want %v and %v", u.CreatedAt, u.LastSeen, early, now)
	}
	h, _, err := s.History(bg, "a", api.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || !h[0].FirstSeen.Equal(early) || !h[1].LastSeen.Equal(now) {
		t.Fatalf("history = %+v", h)
	}
	if it := mustItem(t, s, "x"); !it.CreatedAt.Equal(now) || !it.UpdatedAt.Equal(now) {
		t.Fatalf("item created by an event: %+v, want created at the server time", it)
	}
	// An older event does not change the latest type or value.
	MustAdd(t, s, api.Interaction{UserID: "a", ItemID: "y", Type: "click", Timestamp: early})
	h, _, _ = s.History(bg, "a", api.Page{Limit: 10})
	if h[1].LastType != "view" || h[1].Count != 2 || !h[1].FirstSeen.Equal(now) {
		t.Fatalf("after an older event: %+v", h[1])
	}
}
