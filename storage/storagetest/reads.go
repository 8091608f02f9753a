package storagetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// The contract on the reads serving and training make: the snapshot, the
// per-day activity, profiles and the cache versions.

func testSnapshot(t *testing.T, open Opener) {
	s := open(t, Options{})
	if err := s.PutItems(bg, []api.Item{
		{ID: "x", Features: map[string]float64{"a": 1, "b": 2}, Categories: []string{"c1"}},
		{ID: "y", Features: map[string]float64{"b": 3}, Hidden: true},
		{ID: "z"},
	}); err != nil {
		t.Fatal(err)
	}
	MustAdd(t, s, Ev("u", "y", "view"), Evv("u", "x", "rating", 1), Ev("v", "z", "view"), Ev("v", "x", "like"), Ev("w", "y", "view"))
	MustAdd(t, s, Ev("w", "y", "dislike"))
	snap, err := s.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.FeatureNames, []string{"a", "b"}) {
		t.Fatalf("feature names = %v", snap.FeatureNames)
	}
	if !reflect.DeepEqual(snap.ItemIDs, []string{"", "x", "y", "z"}) || !reflect.DeepEqual(snap.UserIDs, []string{"", "u", "v", "w"}) {
		t.Fatalf("ids = %q / %q", snap.ItemIDs, snap.UserIDs)
	}
	if !reflect.DeepEqual(snap.Features, [][]float64{nil, {1, 2}, {0, 3}, nil}) {
		t.Fatalf("features = %v", snap.Features)
	}
	if !reflect.DeepEqual(snap.Hidden, []bool{false, false, true, false}) || !reflect.DeepEqual(snap.Categories, [][]string{nil, {"c1"}, nil, nil}) {
		t.Fatalf("hidden %v, categories %v", snap.Hidden, snap.Categories)
	}
	// Positive pairs in (user, item) order: (u, y), (v, x), (v, z).
	if !reflect.DeepEqual(snap.Users, []uint32{1, 2, 2}) || !reflect.DeepEqual(snap.Items, []uint32{2, 1, 3}) {
		t.Fatalf("positive pairs = %v/%v", snap.Users, snap.Items)
	}
	if snap.Events != 6 {
		t.Fatalf("events = %d, want 6", snap.Events)
	}
	names, feats, err := s.ItemFeatures(bg)
	if err != nil || !reflect.DeepEqual(names, snap.FeatureNames) || !reflect.DeepEqual(feats, snap.Features) {
		t.Fatalf("ItemFeatures = %v %v %v", names, feats, err)
	}
	cat, err := s.Catalogue(bg)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.Catalogue{ItemIDs: snap.ItemIDs, Index: map[string]uint32{"x": 1, "y": 2, "z": 3},
		Hidden: snap.Hidden, Categories: snap.Categories, Popularity: []int64{0, 1, 1, 1}}
	if !reflect.DeepEqual(cat, want) {
		t.Fatalf("catalogue = %+v, want %+v", cat, want)
	}
	// An empty store has an empty snapshot.
	e, err := open(t, Options{}).Snapshot(bg)
	if err != nil || len(e.Users) != 0 || !reflect.DeepEqual(e.UserIDs, []string{""}) || e.FeatureNames != nil {
		t.Fatalf("empty snapshot = %+v, %v", e, err)
	}
}

// A snapshot and a profile give each positive pair the day of its first
// event, which a later event on another day does not move.
func testSnapshotDays(t *testing.T, open Opener) {
	s := open(t, Options{})
	late := At("b", "x", 3)
	late.Timestamp = late.Timestamp.Add(11*time.Hour + 59*time.Minute) // 23:59 UTC
	MustAdd(t, s, At("a", "x", 1), At("a", "y", 5), late)
	MustAdd(t, s, At("a", "x", 9), At("b", "x", 20))
	snap, err := s.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) int32 { return int32(time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC).Unix() / 86400) }
	if !reflect.DeepEqual(snap.Users, []uint32{1, 1, 2}) || !reflect.DeepEqual(snap.Items, []uint32{1, 2, 1}) {
		t.Fatalf("positive pairs = %v/%v", snap.Users, snap.Items)
	}
	if want := []int32{day(1), day(5), day(3)}; !reflect.DeepEqual(snap.Days, want) {
		t.Fatalf("days = %v, want %v (2026-03-01 is day %d)", snap.Days, want, day(1))
	}
	// b's events are applied (the snapshot applies the tail); a's next
	// ones may still be in it.
	p, err := s.Profile(bg, "b")
	if err != nil || !reflect.DeepEqual(p.PositiveDays, []int32{day(3)}) {
		t.Fatalf("profile of b: days %v (%v), want [%d]", p.PositiveDays, err, day(3))
	}
	MustAdd(t, s, At("a", "z", 2), Ev("a", "w", "dislike"))
	p, err = s.Profile(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Items x=1, y=2, z=3, w=4.
	if !reflect.DeepEqual(p.Positive, []uint32{1, 2, 3}) || !reflect.DeepEqual(p.PositiveDays, []int32{day(1), day(5), day(2)}) {
		t.Fatalf("profile positives %v on days %v, want [1 2 3] on %v", p.Positive, p.PositiveDays, []int32{day(1), day(5), day(2)})
	}
}

func testActivity(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, At("a", "x", 1), At("a", "y", 1), At("b", "x", 3))
	MustAdd(t, s, At("c", "x", 3), At("c", "z", 2))
	got, err := s.Activity(bg, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.DayCount{{Day: "2026-03-01", Events: 2}, {Day: "2026-03-02", Events: 1}, {Day: "2026-03-03", Events: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("activity = %v, want %v", got, want)
	}
	if got, _ := s.Activity(bg, 1); !reflect.DeepEqual(got, want[2:]) {
		t.Fatalf("last day = %v", got)
	}
}

// activity returns the per-day counters as day → events, and their sum.
func activity(tb testing.TB, s backend.Store) (map[string]int64, int64) {
	tb.Helper()
	days, err := s.Activity(bg, 3650)
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

// testActivityAfterDeletes: deleting a user, an interaction or an item
// takes their events off the days they happened on, repeats on later days
// (in or out of order, in one batch or several) included, so the per-day
// counters always sum to the events counter, and a day left with no events
// disappears.
func testActivityAfterDeletes(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, At("a", "x", 1), At("a", "x", 2), At("a", "x", 2), At("a", "y", 3), At("b", "x", 1))
	MustAdd(t, s, At("b", "y", 4), At("b", "y", 2), At("b", "y", 4), At("c", "z", 5), At("c", "x", 1))
	MustAdd(t, s, At("a", "x", 5), At("c", "z", 6))
	check := func(step string, want map[string]int64) {
		t.Helper()
		got, sum := activity(t, s)
		if c := MustCounts(t, s); sum != c.Events {
			t.Errorf("%s: per-day sum %d, events %d (%v)", step, sum, c.Events, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: per day %v, want %v", step, got, want)
		}
	}
	check("before deletes", map[string]int64{"2026-03-01": 3, "2026-03-02": 3, "2026-03-03": 1,
		"2026-03-04": 2, "2026-03-05": 2, "2026-03-06": 1})
	if err := s.DeleteUser(bg, "a"); err != nil { // x on 1, 2, 2, 5; y on 3
		t.Fatal(err)
	}
	check("after DeleteUser(a)", map[string]int64{"2026-03-01": 2, "2026-03-02": 1,
		"2026-03-04": 2, "2026-03-05": 1, "2026-03-06": 1})
	if err := s.DeleteInteraction(bg, "b", "y"); err != nil { // on 4, 2, 4
		t.Fatal(err)
	}
	check("after DeleteInteraction(b, y)", map[string]int64{"2026-03-01": 2, "2026-03-05": 1, "2026-03-06": 1})
	if err := s.DeleteItem(bg, "z"); err != nil { // c on 5, 6
		t.Fatal(err)
	}
	check("after DeleteItem(z)", map[string]int64{"2026-03-01": 2})
	MustAdd(t, s, At("b", "x", 7)) // a repeat on a later day, after the deletes
	if err := s.DeleteInteraction(bg, "b", "x"); err != nil {
		t.Fatal(err)
	}
	check("after b x again and its delete", map[string]int64{"2026-03-01": 1})
}

func testProfile(t *testing.T, open Opener) {
	s := open(t, Options{})
	if p, err := s.Profile(bg, "nobody"); err != nil || p.Known || p.Consumed != nil {
		t.Fatalf("unknown user profile = %+v, %v", p, err)
	}
	MustAdd(t, s, Ev("a", "p", "view"), Ev("b", "q", "view"), Ev("a", "q", "dislike"), Evv("a", "r", "rating", 2), Ev("a", "s", "like"))
	p, err := s.Profile(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Items p=1, q=2, r=3, s=4; the days are the server's (testSnapshotDays).
	if len(p.PositiveDays) != len(p.Positive) {
		t.Fatalf("profile days %v for positives %v", p.PositiveDays, p.Positive)
	}
	p.PositiveDays = nil
	want := api.Profile{Known: true, Consumed: []uint32{1, 2, 3, 4}, Positive: []uint32{1, 4}, Negative: []uint32{2}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("profile = %+v, want %+v", p, want)
	}
	if err := s.DeleteInteraction(bg, "b", "q"); err != nil {
		t.Fatal(err)
	}
	p, err = s.Profile(bg, "b")
	if err != nil || !p.Known || len(p.Consumed) != 0 || len(p.Positive) != 0 || p.Negative != nil {
		t.Fatalf("profile without pairs = %+v, %v", p, err)
	}
	in, err := s.ItemsInteracted(bg, []uint32{4, 0, 2, 3, 1, 77})
	if err != nil || !reflect.DeepEqual(in, []bool{true, false, true, true, true, false}) {
		t.Fatalf("ItemsInteracted = %v, %v", in, err)
	}
	ids, err := s.UserIDs(bg, []uint32{2, 1, 0, 5})
	if err != nil || !reflect.DeepEqual(ids, []string{"b", "a", "", ""}) {
		t.Fatalf("UserIDs = %q, %v", ids, err)
	}
}

func testVersions(t *testing.T, open Opener) {
	s := open(t, Options{})
	i0, e0 := s.Versions()
	MustAdd(t, s, Ev("a", "x", "view"))
	i1, e1 := s.Versions()
	if e1 == e0 {
		t.Fatal("an event write left the events version as it was")
	}
	if err := s.PutItems(bg, []api.Item{{ID: "x", Hidden: true}}); err != nil {
		t.Fatal(err)
	}
	i2, _ := s.Versions()
	if i2 == i1 || i1 != i0 {
		t.Fatalf("items versions %d → %d → %d, want a change on the catalogue write only", i0, i1, i2)
	}
	if err := s.DeleteItem(bg, "x"); err != nil {
		t.Fatal(err)
	}
	if i3, e3 := s.Versions(); i3 == i2 || e3 == e1 {
		t.Fatal("deleting an item changes both versions")
	}
}
