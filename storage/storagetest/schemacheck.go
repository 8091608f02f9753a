package storagetest

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/dump"
	"github.com/recsys-engine/recsys/storage/record"
)

// SchemaFillCounts are the counters SchemaFill leaves, worked out by hand
// from its events: five users less the deleted one; m1–m3 and m4, first
// seen in an event; nine pairs left after the two deletes; seven of them
// positive (not carol's dislike nor her rating of 3); thirteen events less
// the deleted pair's one and the deleted user's one.
var SchemaFillCounts = api.Counts{Users: 4, Items: 4, Interactions: 9, Positives: 7, Events: 11}

// SchemaFillDays are its events per day: the 5th's two events belonged to
// the deleted pair and the deleted user.
var SchemaFillDays = []api.DayCount{{Day: "2026-11-01", Events: 2}, {Day: "2026-11-02", Events: 2},
	{Day: "2026-11-03", Events: 1}, {Day: "2026-11-04", Events: 3}, {Day: "2026-11-06", Events: 3}}

// CompareMigrated fails the test unless got, a store opened on a fixture
// SchemaFill made with older code, holds what want, a store today's code
// filled with SchemaFill, holds: every public read (Compare), the models
// and their blobs, the active model, the jobs, the reports and, with
// online, SchemaFillOnline's lists, counters and experiments. Where both
// are dumpable their whole dumps must match too.
func CompareMigrated(tb testing.TB, got, want backend.Store, online bool) {
	tb.Helper()
	Compare(tb, got, want)
	if c := MustCounts(tb, got); c != SchemaFillCounts {
		tb.Fatalf("counts %+v, want %+v", c, SchemaFillCounts)
	}
	if days, err := got.Activity(bg, 3650); err != nil || !reflect.DeepEqual(days, SchemaFillDays) {
		tb.Fatalf("activity %+v (%v), want %+v", days, err, SchemaFillDays)
	}
	same := func(what string, read func(s backend.Store) (any, error)) {
		tb.Helper()
		x, errX := read(got)
		y, errY := read(want)
		if errX != nil || errY != nil || !reflect.DeepEqual(x, y) {
			tb.Fatalf("%s differ:\n%+v (%v)\n%+v (%v)", what, x, errX, y, errY)
		}
	}
	same("models", func(s backend.Store) (any, error) { return s.Models(bg) })
	same("active model", func(s backend.Store) (any, error) { return s.ActiveModel(bg) })
	same("jobs", func(s backend.Store) (any, error) { return s.Jobs(bg, 100) })
	same("reports", func(s backend.Store) (any, error) { return s.Reports(bg) })
	models, err := got.Models(bg)
	if err != nil || len(models) != 1 || models[0].Name != "popular" || !models[0].Active {
		tb.Fatalf("models %+v (%v), want the one active popular model", models, err)
	}
	if models[0].ServingCost != nil {
		tb.Fatalf("a model stored without a serving cost (the fixtures were written before costs were measured) reads as measured: %+v", models[0].ServingCost)
	}
	blob, err := got.ModelBlob(bg, "popular", models[0].Version)
	if err != nil || !bytes.Equal(blob, SchemaFillBlob) {
		tb.Fatalf("model blob %q (%v), want %q", blob, err, SchemaFillBlob)
	}
	if online {
		same("online counts", func(s backend.Store) (any, error) { return s.OnlineCounts(bg, "2026-11-01", "2026-11-30") })
		same("experiments", func(s backend.Store) (any, error) { return s.Experiments(bg) })
		imps := SchemaFillImpressions()
		touch := []api.Touch{{RecommendationID: imps[1].ID, UserID: "bob", ItemID: "m2", At: imps[1].At.Add(time.Minute)}}
		same("attribution to a migrated list", func(s backend.Store) (any, error) { return s.Attribute(bg, touch, time.Hour) })
	}
	sum := func(s backend.Store) *dump.Sum {
		d := dump.NewSum(nil)
		if err := s.Dump(bg, resealed{d}); err != nil {
			tb.Fatal(err)
		}
		return d
	}
	if a, b := sum(got), sum(want); a.Sum() != b.Sum() {
		tb.Fatalf("dumps differ: %s (%s) against %s (%s)", a, a.Sum(), b, b.Sum())
	}
}

// resealed passes a dump on with every model blob sealed: a blob written
// before blobs were sealed (schema 1 and early 2) is stored as it came,
// and read as it is.
type resealed struct{ dump.Sink }

func (r resealed) Model(m dump.Model) error {
	blob, err := record.Unseal(m.Sealed)
	if err != nil {
		return err
	}
	m.Sealed = record.Seal(blob)
	return r.Sink.Model(m)
}

// CompareMigratedThenOnline is CompareMigrated for a store migrated from a
// version with online data (online) or without it; without, it then fills
// both stores' online buckets or tables, which the migration added, and
// compares again, so that they are shown to take data. Then both take a
// list for a placement (comparePlaced).
func CompareMigratedThenOnline(tb testing.TB, got, want backend.Store, online bool) {
	tb.Helper()
	CompareMigrated(tb, got, want, online)
	if !online {
		for _, s := range []backend.Store{got, want} {
			if err := SchemaFillOnline(context.Background(), s); err != nil {
				tb.Fatal(err)
			}
		}
		CompareMigrated(tb, got, want, true)
	}
	comparePlaced(tb, got, want)
}

// comparePlaced: the lists of a fixture, all recorded before placements
// were (as lists without one), keep their counters beside those of a list
// recorded after the migration for placement home, of the same day, model
// and arm, and credited a click; both stores count alike.
func comparePlaced(tb testing.TB, got, want backend.Store) {
	tb.Helper()
	at := time.Date(2026, 11, 7, 10, 0, 0, 0, time.UTC)
	imp := api.Impression{ID: api.NewRecommendationID(at, "p", 1), UserID: "alice", Model: "popular", ModelVersion: "v000001",
		Items: []string{"m1", "m3"}, At: at, Placement: "home"}
	// By hand: SchemaFillOnline's two lists of two items, one click on
	// each (alice's m4, and bob's m2 in CompareMigrated); the home list
	// two items, one clicked.
	wantCounts := []api.OnlineCount{
		{Day: "2026-11-07", Model: "itemknn", Experiment: "x000001", Arm: "b", Lists: 1, Impressions: 2, Clicks: 1},
		{Day: "2026-11-07", Model: "popular", Lists: 1, Impressions: 2, Clicks: 1},
		{Day: "2026-11-07", Model: "popular", Placement: "home", Lists: 1, Impressions: 2, Clicks: 1},
	}
	for k, s := range []backend.Store{got, want} {
		if err := s.PutImpressions(bg, []api.Impression{imp}); err != nil {
			tb.Fatal(err)
		}
		a, err := s.Attribute(bg, []api.Touch{{RecommendationID: imp.ID, UserID: "alice", ItemID: "m3", At: at.Add(time.Minute)}}, time.Hour)
		if err != nil || len(a) != 1 || a[0].Placement != "home" || a[0].Position != 1 {
			tb.Fatalf("store %d: a click on the home list credited %+v (%v), want position 1 of home", k, a, err)
		}
		if c, err := s.OnlineCounts(bg, "2026-11-01", "2026-11-30"); err != nil || !reflect.DeepEqual(c, wantCounts) {
			tb.Fatalf("store %d: counters with a placed list %+v (%v), want %+v", k, c, err, wantCounts)
		}
	}
	Compare(tb, got, want)
}
