package storagetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/dump"
)

// Fill writes a workload (Workload), two model versions of one name and
// one of another, the active model, jobs, reports and online data
// (FillOnline).
func Fill(tb testing.TB, s backend.Store, seed int) {
	tb.Helper()
	Workload(tb, s, seed)
	for k, name := range []string{"knn", "knn", "als"} {
		v, err := s.NewModelVersion(bg)
		if err != nil {
			tb.Fatal(err)
		}
		blob := make([]byte, 1000*(k+1))
		for j := range blob {
			blob[j] = byte(j*seed + k)
		}
		if err := s.PutModel(bg, api.ModelInfo{Name: name, Version: v, Params: map[string]float64{"k": float64(k)},
			Validation: map[string]float64{"adg": 0.25}, TrainSeconds: 1.5}, blob); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.SetActiveModel(bg, "knn"); err != nil {
		tb.Fatal(err)
	}
	for _, st := range []string{api.JobSucceeded, api.JobFailed} {
		id, err := s.NewJobID(bg)
		if err != nil {
			tb.Fatal(err)
		}
		if err := s.PutJob(bg, api.Job{ID: id, Kind: "train", State: st, Models: []string{"knn"},
			CreatedAt: time.Date(2026, 3, 9, 1, 2, 3, 0, time.UTC)}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.PutReport(bg, &api.Report{Protocol: "holdout"}); err != nil {
		tb.Fatal(err)
	}
	FillOnline(tb, s, seed)
	FillRules(tb, s)
}

// FillRules stores two rules and a placement.
func FillRules(tb testing.TB, s backend.Store) {
	tb.Helper()
	at := time.Date(2026, 3, 9, 4, 0, 0, 0, time.UTC)
	lambda := 0.5
	for _, r := range []api.Rule{
		{Name: "campaign", Condition: `"c1" in categories`, Action: api.ActionBoost, Factor: 2, StartsAt: at,
			EndsAt: at.Add(24 * time.Hour), Placements: []string{"home"}, CreatedAt: at, UpdatedAt: at},
		{Name: "stock", Condition: `labels.stock == "0"`, Action: api.ActionExclude, CreatedAt: at, UpdatedAt: at},
	} {
		if err := s.CreateRule(bg, r); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := s.PutPlacement(bg, api.Placement{Name: "home", Model: "knn", N: 8, Filter: "age_days < 30",
		Rules: []string{"stock"}, Diversity: api.Diversity{MaxPerCategory: 2, Lambda: &lambda}, UpdatedAt: at}); err != nil {
		tb.Fatal(err)
	}
}

// FillOnline records what the online service writes: an experiment run
// and stopped, a second one left running, lists shown over two days
// inside and outside them (one without a user), for placements home and
// product and for none, and touches credited to some by id and by window,
// clicks and a conversion.
func FillOnline(tb testing.TB, s backend.Store, seed int) {
	tb.Helper()
	t0 := time.Date(2026, 3, 8, 23, 40, 0, 0, time.UTC)
	arms := []api.Arm{{Model: "popular", Share: 50}, {Model: "knn", Share: 50}}
	first, err := s.CreateExperiment(bg, api.Experiment{Name: "first", Arms: arms, Alpha: 0.05, MinImpressions: 10, CreatedAt: t0})
	if err != nil {
		tb.Fatal(err)
	}
	if first, err = s.StopExperiment(bg, first.ID, t0.Add(30*time.Minute)); err != nil {
		tb.Fatal(err)
	}
	second, err := s.CreateExperiment(bg, api.Experiment{Name: "second", Arms: arms, Alpha: 0.01, MinImpressions: 20, CreatedAt: t0.Add(31 * time.Minute)})
	if err != nil {
		tb.Fatal(err)
	}
	credited := 0
	for k := range 12 + seed {
		at := t0.Add(time.Duration(5*k) * time.Minute) // past midnight from k = 4
		imp := api.Impression{ID: api.NewRecommendationID(at, "f", uint64(k+1)), UserID: fmt.Sprintf("u%d", k%5),
			Model: "knn", ModelVersion: "v000001", Items: []string{fmt.Sprintf("i%d", k%7), fmt.Sprintf("i%d", (k+3)%7), "i9"}, At: at}
		switch {
		case k%4 == 1:
			imp.Model, imp.ModelVersion = "popular", ""
		case k == 2:
			imp.UserID = "" // an anonymous history's list
		}
		imp.Placement = []string{"home", "product", ""}[k%3]
		if at.Before(first.StoppedAt) {
			imp.Experiment, imp.Arm = first.ID, imp.Model
		} else if !at.Before(second.CreatedAt) {
			imp.Experiment, imp.Arm = second.ID, imp.Model
		}
		if err := s.PutImpressions(bg, []api.Impression{imp}); err != nil {
			tb.Fatal(err)
		}
		// Touches come in as the lists are shown, by id or by window.
		var touches []api.Touch
		switch k {
		case 0:
			touches = []api.Touch{{RecommendationID: imp.ID, UserID: imp.UserID, ItemID: imp.Items[1], At: at.Add(time.Minute)}}
		case 2:
			touches = []api.Touch{{RecommendationID: imp.ID, UserID: "signed-in", ItemID: imp.Items[0], At: at.Add(time.Minute), Conversion: true}}
		case 5:
			touches = []api.Touch{{UserID: imp.UserID, ItemID: imp.Items[2], At: at.Add(2 * time.Minute)}}
		case 7:
			touches = []api.Touch{{UserID: imp.UserID, ItemID: imp.Items[0], At: at.Add(time.Minute), Conversion: true},
				{UserID: imp.UserID, ItemID: imp.Items[0], At: at.Add(2 * time.Minute)}} // credited already
		}
		got, err := s.Attribute(bg, touches, 30*time.Minute)
		if err != nil {
			tb.Fatal(err)
		}
		credited += len(got)
	}
	if credited != 4 {
		tb.Fatalf("FillOnline: %d touches credited, want 4", credited)
	}
}

// Migrate copies src into dst as `recsys migrate` does and returns the
// checksum of what went in, failing the test unless a dump of dst has the
// same records and checksum.
func Migrate(tb testing.TB, src, dst backend.Store) string {
	tb.Helper()
	in := dump.NewSum(nil)
	if err := dst.Restore(bg, func(sink dump.Sink) error {
		in = dump.NewSum(sink)
		return src.Dump(bg, in)
	}); err != nil {
		tb.Fatal(err)
	}
	out := dump.NewSum(nil)
	if err := dst.Dump(bg, out); err != nil {
		tb.Fatal(err)
	}
	if in.Sum() != out.Sum() || !reflect.DeepEqual(in.Counts, out.Counts) {
		tb.Fatalf("copied %s (%s), the copy holds %s (%s)", in, in.Sum(), out, out.Sum())
	}
	return in.Sum()
}

// SameServices fails the test unless the stores hold the same models, jobs
// and reports, and give out the same next ids (which it takes).
func SameServices(tb testing.TB, a backend.Store, others ...backend.Store) {
	tb.Helper()
	same := func(what string, read func(s backend.Store) (any, error)) {
		tb.Helper()
		x, errX := read(a)
		for _, b := range others {
			y, errY := read(b)
			if errX != nil || errY != nil || !reflect.DeepEqual(x, y) {
				tb.Fatalf("%s differ: %+v (%v) / %+v (%v)", what, x, errX, y, errY)
			}
		}
	}
	same("models", func(s backend.Store) (any, error) { return s.Models(bg) })
	same("active model", func(s backend.Store) (any, error) { return s.ActiveModel(bg) })
	ms, _ := a.Models(bg)
	for _, m := range ms {
		same("blob "+m.Name+" "+m.Version, func(s backend.Store) (any, error) { return s.ModelBlob(bg, m.Name, m.Version) })
	}
	same("jobs", func(s backend.Store) (any, error) { return s.Jobs(bg, 100) })
	same("reports", func(s backend.Store) (any, error) { return s.Reports(bg) })
	same("next job id", func(s backend.Store) (any, error) { return s.NewJobID(bg) })
	same("next model version", func(s backend.Store) (any, error) { return s.NewModelVersion(bg) })
	same("next user index", func(s backend.Store) (any, error) {
		if _, err := s.AddInteractions(bg, []api.Interaction{Ev("brand-new", "brand-new-item", "view")}); err != nil {
			return nil, err
		}
		return s.Profile(bg, "brand-new")
	})
}

// testDumpRestore: a store restored from another's dump answers every read
// as the original, holds the same models, jobs and reports, and goes on
// from the same sequences; a restore into a store with data, or one whose
// dump fails half-way, stores nothing.
func testDumpRestore(t *testing.T, open Opener) {
	now := time.Date(2026, 3, 8, 9, 10, 11, 12, time.UTC)
	o := Options{Now: func() time.Time { return now }}
	src, dst := open(t, o), open(t, o)
	Fill(t, src, 2)
	Migrate(t, src, dst)
	Compare(t, src, dst)
	SameServices(t, src, dst)

	if err := dst.Restore(bg, func(sink dump.Sink) error { return src.Dump(bg, sink) }); !errors.Is(err, dump.ErrNotEmpty) {
		t.Fatalf("restore into a store with data: err = %v, want ErrNotEmpty", err)
	}
	half := open(t, o)
	stop := errors.New("the source failed")
	n := 0
	err := half.Restore(bg, func(sink dump.Sink) error {
		return src.Dump(bg, failAfter{Sink: sink, n: &n, err: stop})
	})
	if !errors.Is(err, stop) {
		t.Fatalf("a restore whose source fails: err = %v", err)
	}
	sum := dump.NewSum(nil)
	if err := half.Dump(bg, sum); err != nil {
		t.Fatal(err)
	}
	if sum.Counts["users"]+sum.Counts["items"]+sum.Counts["pairs"] != 0 {
		t.Fatalf("a failed restore left %s", sum)
	}
	Migrate(t, src, half) // and the store is still empty enough to take one
}

// failAfter fails the 50th pair.
type failAfter struct {
	dump.Sink
	n   *int
	err error
}

func (f failAfter) Pair(p dump.Pair) error {
	if *f.n++; *f.n == 50 {
		return f.err
	}
	return f.Sink.Pair(p)
}
