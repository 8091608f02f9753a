package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// The fixed workload other packages' tests fill a store with, and the
// invariants every store keeps after it.

// testInvariants runs a mixed workload and checks that the counters agree
// with what they count.
func testInvariants(t *testing.T, open Opener) {
	s := open(t, Options{})
	Workload(t, s, 1)
	checkInvariants(t, s)
}

// Workload writes a fixed mix of events (every type of the default policy,
// values, timestamps over several days, repeats out of order), catalogue
// writes and deletes; seed varies it.
func Workload(tb testing.TB, s backend.Store, seed int) {
	tb.Helper()
	types := []string{"view", "click", "like", "dislike", "purchase", "rating", "view", "skip"}
	x := uint32(seed*2654435761 + 12345)
	rnd := func(n int) int { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return int(x % uint32(n)) }
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for round := range 6 {
		var evs []api.Interaction
		for range 80 {
			typ := types[rnd(len(types))]
			if typ == "skip" {
				typ = "view"
			}
			e := api.Interaction{UserID: fmt.Sprintf("u%02d", rnd(17)), ItemID: fmt.Sprintf("i%02d", rnd(23)), Type: typ}
			if typ == "rating" {
				e.Value, e.HasValue = float64(1+rnd(5)), true
			}
			if rnd(4) > 0 {
				e.Timestamp = base.Add(time.Duration(rnd(7*24*60)) * time.Minute)
			}
			evs = append(evs, e)
		}
		MustAdd(tb, s, evs...)
		if err := s.PutItems(bg, []api.Item{{ID: fmt.Sprintf("i%02d", rnd(23)), Features: map[string]float64{"f": float64(round)},
			Categories: []string{fmt.Sprintf("c%d", round%3)}}, {ID: fmt.Sprintf("n%d", round)}}); err != nil {
			tb.Fatal(err)
		}
		for _, err := range []error{
			s.DeleteInteraction(bg, fmt.Sprintf("u%02d", rnd(17)), fmt.Sprintf("i%02d", rnd(23))),
			s.DeleteUser(bg, fmt.Sprintf("u%02d", rnd(17))),
		} {
			if err != nil && api.ErrorCode(err) != api.CodeNotFound {
				tb.Fatal(err)
			}
		}
		if round%2 == 1 {
			if err := s.DeleteItem(bg, fmt.Sprintf("i%02d", rnd(23))); err != nil && api.ErrorCode(err) != api.CodeNotFound {
				tb.Fatal(err)
			}
		}
	}
}

// checkInvariants: the counters equal the sums of what they count.
func checkInvariants(tb testing.TB, s backend.Store) {
	tb.Helper()
	c := MustCounts(tb, s)
	_, daySum := activity(tb, s)
	snap, err := s.Snapshot(bg)
	if err != nil {
		tb.Fatal(err)
	}
	var users, pairs, events, positives, pop int64
	for _, id := range snap.UserIDs {
		if id == "" {
			continue
		}
		users++
		u := mustUser(tb, s, id)
		pairs += u.Items
		events += u.Events
		positives += u.Positives
		h, _, err := s.History(bg, id, api.Page{Limit: 1000})
		if err != nil {
			tb.Fatal(err)
		}
		var n, pos int64
		for _, e := range h {
			n += e.Count
			if e.Positive {
				pos++
			}
		}
		if int64(len(h)) != u.Items || n != u.Events || pos != u.Positives {
			tb.Fatalf("user %s = %+v, history has %d pairs, %d events, %d positives", id, u, len(h), n, pos)
		}
	}
	cat, err := s.Catalogue(bg)
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range cat.Popularity {
		pop += p
	}
	if users != c.Users || pairs != c.Interactions || events != c.Events || positives != c.Positives ||
		pop != c.Positives || int64(len(snap.Users)) != c.Positives || daySum != c.Events {
		tb.Fatalf("counts %+v; sums: %d users, %d pairs, %d events, %d positives, popularity %d, snapshot %d, days %d",
			c, users, pairs, events, positives, pop, len(snap.Users), daySum)
	}
}
