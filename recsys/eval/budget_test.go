package eval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// scriptClock is a search's clock for the tests: each reading advances it
// by the next of steps (the last one repeating).
type scriptClock struct {
	t     time.Time
	steps []time.Duration
	reads int
}

func (c *scriptClock) now() time.Time {
	c.t = c.t.Add(c.steps[min(c.reads, len(c.steps)-1)])
	c.reads++
	return c.t
}

// budgetFixture is the data of TestTune_extendsGridEdge, where itemknn on
// k ∈ {1, 2} extends k to 4 and 8, split, with its cache at k_max 2.
func budgetFixture(t *testing.T) (*Split, *recsys.NeighbourCache) {
	t.Helper()
	s, err := NewSplit(clustered(5, 150, 90, 3, 16), Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	return s, recsys.NewNeighbourCache(s.Train, 2)
}

// formulaOf is the formula seconds of one itemknn point as the search
// predicts it on the fixture (every validation user).
func itemknnFormula(t *testing.T, s *Split, cache *recsys.NeighbourCache, k int) float64 {
	t.Helper()
	kind, err := recsys.KindOf("itemknn")
	if err != nil {
		t.Fatal(err)
	}
	return newSearchCost(kind, Tuning{}, s.Train, s.Validation, cache.KMax()).formulaOf([]recsys.Params{{K: k}}, false)
}

// The search's predictions are the formula corrected by the points
// measured: the second point by the first's measured/formula ratio, the
// third by the second's alone (the first, which builds the cache's lists,
// is left out once another is measured). Without a deadline the clock is
// read twice a point, at its start and its end, so the script sets each
// point's measured seconds: 3, 5, 2.
func TestTune_calibratesPointCost(t *testing.T) {
	s, cache := budgetFixture(t)
	clock := &scriptClock{steps: []time.Duration{0, 3 * time.Second, 0, 5 * time.Second, 0, 2 * time.Second}}
	tuned, err := Tune(context.Background(), "itemknn", s, cache, Tuning{Grid: recsys.Grid{K: []int{1, 2, 4}}, ValidationUsers: -1, Extend: -1, now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	f := []float64{itemknnFormula(t, s, cache, 1), itemknnFormula(t, s, cache, 2), itemknnFormula(t, s, cache, 4)}
	if f[0] <= 0 || f[1] <= f[0] || f[2] <= f[1] {
		t.Fatalf("itemknn's formula %v does not grow with k", f)
	}
	want := []PointTime{
		{Params: "k=1", Predicted: f[0], Measured: 3},
		{Params: "k=2", Predicted: f[1] * 3 / f[0], Measured: 5},
		{Params: "k=4", Predicted: f[2] * 5 / f[1], Measured: 2},
	}
	if len(tuned.Points) != len(want) {
		t.Fatalf("points %+v, want %+v", tuned.Points, want)
	}
	for k, p := range tuned.Points {
		if p.Params != want[k].Params || math.Abs(p.Predicted-want[k].Predicted) > 1e-9*want[k].Predicted || p.Measured != want[k].Measured || p.Skipped != "" {
			t.Errorf("point %d: %+v, want %+v", k, p, want[k])
		}
	}
	if len(tuned.Skipped) != 0 || len(tuned.Candidates) != 3 {
		t.Errorf("skipped %v, %d candidates; want none, 3", tuned.Skipped, len(tuned.Candidates))
	}
}

// A point predicted to end past the deadline is skipped and listed with
// its reason; the first point is fitted however late. The clock advances
// 10 s a reading: the first point measures 10 s (two readings), each
// later point reads it at its start and to check the time left.
func TestTune_skipsPointsPastDeadline(t *testing.T) {
	s, cache := budgetFixture(t)
	clock := &scriptClock{steps: []time.Duration{10 * time.Second}}
	fits := 0
	tuned, err := Tune(context.Background(), "itemknn", s, cache, Tuning{Grid: recsys.Grid{K: []int{1, 2, 4}}, ValidationUsers: -1, Extend: -1,
		Deadline: time.Time{}.Add(45 * time.Second), now: clock.now, OnFit: func() { fits++ }})
	if err != nil {
		t.Fatal(err)
	}
	f1, f2, f4 := itemknnFormula(t, s, cache, 1), itemknnFormula(t, s, cache, 2), itemknnFormula(t, s, cache, 4)
	// k=2 is checked at 40 s (5 s left), k=4 at 60 s (none).
	p2, p4 := f2*10/f1, f4*10/f1
	if p2 <= 5 {
		t.Fatalf("k=2 predicted %.3g s, not past the 5 s left: the fixture no longer tests the rule", p2)
	}
	want := []string{
		fmt.Sprintf("k=2: predicted %s, 5.0 s left of the budget", formatSeconds(p2)),
		fmt.Sprintf("k=4: predicted %s, 0 s left of the budget", formatSeconds(p4)),
	}
	if !slices.Equal(tuned.Skipped, want) {
		t.Errorf("skipped %q, want %q", tuned.Skipped, want)
	}
	if tuned.Params.K != 1 || fits != 1 || len(tuned.Candidates) != 1 {
		t.Errorf("chose k = %d after %d fits of %d candidates; want k = 1, the first point alone", tuned.Params.K, fits, len(tuned.Candidates))
	}
	if len(tuned.Points) != 3 || tuned.Points[0].Measured != 10 || tuned.Points[1].Skipped != want[0] || tuned.Points[2].Measured != 0 {
		t.Errorf("points %+v", tuned.Points)
	}
}

// The extension takes no step predicted past the deadline: the grid's two
// points fit (k=2 is checked at 40 s, 15 s before the deadline, and
// measures 20 s, from its start at 30 s to its end at 50 s), the step to
// k=4 is checked at 60 s, past it, so k=2 stays an edge and the step is
// reported with its reason. With the time, the same search extends to
// k=8 (TestTune_extendsGridEdge).
func TestTune_extensionStepPastDeadline(t *testing.T) {
	s, cache := budgetFixture(t)
	clock := &scriptClock{steps: []time.Duration{10 * time.Second}}
	tuned, err := Tune(context.Background(), "itemknn", s, cache, Tuning{Grid: recsys.Grid{K: []int{1, 2}}, ValidationUsers: -1,
		Deadline: time.Time{}.Add(55 * time.Second), now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	f1, f2, f4 := itemknnFormula(t, s, cache, 1), itemknnFormula(t, s, cache, 2), itemknnFormula(t, s, cache, 4)
	if f2*10/f1 > 15 {
		t.Fatalf("k=2 predicted %.3g s, past the 15 s left: the fixture no longer tests the step", f2*10/f1)
	}
	// The rate after k=2 leaves the first point out.
	want := fmt.Sprintf("k=4: predicted %s, 0 s left of the budget", formatSeconds(f4*20/f2))
	if !slices.Equal(tuned.Skipped, []string{want}) || len(tuned.Extended) != 0 || !slices.Equal(tuned.AtEdge, []string{"k=2"}) || tuned.Params.K != 2 {
		t.Errorf("skipped %q, extended %v, at edge %v, k = %d; want %q, none, k=2, 2", tuned.Skipped, tuned.Extended, tuned.AtEdge, tuned.Params.K, want)
	}
}

// A FitGrid batch (slim) is trimmed to the points that fit: with the
// deadline passed, only the first point is fitted, the others listed as
// fitted at once with it.
func TestTune_trimsFitGridBatch(t *testing.T) {
	s, cache := budgetFixture(t)
	clock := &scriptClock{steps: []time.Duration{time.Second}}
	tuned, err := Tune(context.Background(), "slim", s, cache, Tuning{Grid: recsys.Grid{K: []int{1, 2}, SLIM: [][2]float64{{1, 1}, {0.1, 1}}},
		ValidationUsers: -1, Extend: -1, Deadline: time.Time{}.Add(-time.Hour), now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	if len(tuned.Candidates) != 1 || tuned.Params.K != 1 || tuned.Params.L1 != 1 {
		t.Fatalf("fitted %+v, chose %+v; want the first point alone", tuned.Candidates, tuned.Params)
	}
	var got []string
	for _, p := range tuned.Points {
		got = append(got, p.Params)
	}
	if !slices.Equal(got, []string{"k=1 l1=0.1 l2=1", "k=2 l1=1 l2=1", "k=2 l1=0.1 l2=1", "k=1 l1=1 l2=1"}) {
		t.Errorf("points %q: the three skipped (recorded as trimmed), then the one fitted", got)
	}
	if len(tuned.Skipped) != 3 {
		t.Fatalf("skipped %q, want 3", tuned.Skipped)
	}
	for _, why := range tuned.Skipped {
		if !strings.Contains(why, " (fitted at once with 1 more): predicted ") || !strings.HasSuffix(why, "0 s left of the budget") {
			t.Errorf("reason %q", why)
		}
	}
}

// A kind with its own search (FEBR) always makes its first search, then
// predicts each extension step from it: its measured seconds per unit of
// work, one for each λ run and each k's features (2 k × 2 λ: 6 units),
// times the step's units, a step up in k scaled by the ratio of the ks.
// Past the deadline neither step is taken.
func TestTune_searchStepPastDeadline(t *testing.T) {
	d := clustered(7, 100, 80, 4, 16)
	s, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	cache := recsys.NewNeighbourCache(s.Train, 20)
	clock := &scriptClock{steps: []time.Duration{10 * time.Second}}
	tuned, err := Tune(context.Background(), "febr-i-kunn", s, cache, Tuning{Grid: recsys.Grid{K: []int{10, 20}, Lambda: []float64{1e-3, 1e-2}},
		ValidationUsers: -1, Options: &febr.Options{EvalEvery: 1000, Patience: 2, Seed: 1}, Deadline: time.Time{}.Add(25 * time.Second), now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(tuned.Candidates)) // the first search's fits: none added
	if n != 4 {
		t.Fatalf("%d candidates, want 4 (2 k × 2 λ)", len(tuned.Candidates))
	}
	perUnit := 10.0 / 6 // the first search measured 10 s
	k, lambda := tuned.Params.K, febrOptions(tuned.Params).Lambda
	var kStep string
	if k == 20 {
		kStep = fmt.Sprintf("k=40: predicted %s, 0 s left of the budget", formatSeconds(3*perUnit*2)) // 2 λ and the features, ×40/20
	} else {
		kStep = fmt.Sprintf("k=5: predicted %s, 0 s left of the budget", formatSeconds(3*perUnit))
	}
	next := lambda / 2 // the grid's ×10 step capped at MaxStep
	if lambda == 1e-2 {
		next = lambda * 2
	}
	lStep := fmt.Sprintf("lambda=%g: predicted %s, 0 s left of the budget", next, formatSeconds(2*perUnit)) // 1 λ and the features
	if !slices.Equal(tuned.Skipped, []string{kStep, lStep}) || len(tuned.Extended) != 0 {
		t.Errorf("skipped %q, extended %v; want %q, none", tuned.Skipped, tuned.Extended, []string{kStep, lStep})
	}
	if len(tuned.Points) != 1 || tuned.Points[0] != (PointTime{Params: "grid", Measured: 10}) {
		t.Errorf("points %+v, want the first search alone, 10 s", tuned.Points)
	}
}

// A blend's base searches run within the blend's deadline: past it, its
// itemknn base fits its first point alone, and the blend lists the
// base's skipped points under the base's name. The blend's λ step is not
// taken either; its prediction counts the base searches the step would
// make again (not shared here), at least their points' seconds.
func TestTune_blendBasesWithinDeadline(t *testing.T) {
	s, cache := budgetFixture(t)
	clock := &scriptClock{steps: []time.Duration{time.Second}}
	tuned, err := Tune(context.Background(), febr.BlendName, s, cache, Tuning{Grid: recsys.Grid{K: []int{1, 2, 4, 8}, Lambda: []float64{1e-3, 1e-2}}, ValidationUsers: -1,
		Options: &febr.Options{Seed: 1, Blend: &febr.BlendOptions{Bases: []string{"popular", "itemknn"}}}, Deadline: time.Time{}.Add(-time.Hour), now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	if _, p := tuned.Model.(*febr.Blend).Base(1); p.K != 1 {
		t.Errorf("the itemknn base has k = %d, want 1 (its first point alone)", p.K)
	}
	if len(tuned.Skipped) == 0 || !strings.HasPrefix(tuned.Skipped[0], "itemknn.k=2: predicted ") {
		t.Errorf("skipped %q, want itemknn.k=2 first", tuned.Skipped)
	}
	var names []string
	for _, p := range tuned.Points {
		names = append(names, p.Params)
	}
	if len(names) < 3 || names[0] != "popular.defaults" || names[1] != "itemknn.k=1" || names[2] != "itemknn.k=2" || !slices.Contains(names, "grid") {
		t.Errorf("points %q: want the bases' (popular, itemknn k=1 fitted, k=2 skipped), then the blend's search", names)
	}
	// Each base point, fitted or skipped, reads the clock at least once
	// (1 s) within the base searches; the blend's own work reads it about
	// once, so without the bases the step would be predicted at about 1 s.
	bases := 0.0
	for _, p := range tuned.Points {
		if strings.Contains(p.Params, ".") {
			bases++
		}
	}
	last := tuned.Skipped[len(tuned.Skipped)-1]
	var step string
	var predicted float64
	if _, err := fmt.Sscanf(strings.Replace(last, ": predicted ", " ", 1), "%s %g s", &step, &predicted); err != nil || !strings.HasPrefix(step, "lambda=") {
		t.Fatalf("the last skipped %q is not the blend's λ step (%v)", last, err)
	}
	if bases == 0 || predicted < bases {
		t.Errorf("the λ step predicted %g s, below the %g s of the base searches it makes again", predicted, bases)
	}
}

// shareDeadline gives a blend's base an equal share of the time left
// among the bases from it on that still need a search: those with a grid
// not made already (popular has none).
func TestShareDeadline(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return start }
	tn := Tuning{Deadline: start.Add(90 * time.Second), now: now}
	names := []string{"popular", "itemknn", "kunn", "slim"}
	none := func(string) bool { return false }
	for _, c := range []struct {
		name string
		done func(string) bool
		want time.Duration
	}{
		{"popular", none, 30 * time.Second}, // itemknn, kunn, slim
		{"itemknn", none, 30 * time.Second},
		{"kunn", none, 45 * time.Second},
		{"kunn", func(n string) bool { return n == "slim" }, 90 * time.Second},
		{"slim", none, 90 * time.Second},
	} {
		if got := shareDeadline(tn, names, c.name, c.done); !got.Equal(start.Add(c.want)) {
			t.Errorf("%s: deadline in %v, want %v", c.name, got.Sub(start), c.want)
		}
	}
	if got := shareDeadline(Tuning{}, names, "itemknn", none); !got.IsZero() {
		t.Errorf("no budget: deadline %v, want none", got)
	}
}

// The report row lists each fold's skipped points with their reasons and
// every point's predicted/measured seconds.
func TestReportRow_budgetSettings(t *testing.T) {
	folds := []*foldResult{
		{grid: "k∈{1,2}", params: map[string]float64{"k": 1},
			skipped: []string{"k=2: predicted 12 s, 5.0 s left of the budget"},
			points:  []PointTime{{Params: "k=1", Predicted: 0.5, Measured: 0.25}, {Params: "k=2", Predicted: 12, Skipped: "k=2: predicted 12 s, 5.0 s left of the budget"}}},
		{grid: "k∈{1,2}", params: map[string]float64{"k": 2},
			points: []PointTime{{Params: "k=1", Measured: 1.5}, {Params: "k=2", Predicted: 2.125, Measured: 2}}},
	}
	row := reportRow("itemknn", folds, Standard)
	if got, want := row.Settings["skipped_by_fold"], "k=2: predicted 12 s, 5.0 s left of the budget | -"; got != want {
		t.Errorf("skipped_by_fold %q, want %q", got, want)
	}
	if got, want := row.Settings["points_by_fold"], "k=1 0.5/0.25 s, k=2 12/skipped; k=1 -/1.5 s, k=2 2.12/2 s"; got != want {
		t.Errorf("points_by_fold %q, want %q", got, want)
	}
	// Without a budget nothing is skipped and the setting is left out.
	row = reportRow("itemknn", folds[1:], Standard)
	if _, ok := row.Settings["skipped_by_fold"]; ok {
		t.Errorf("settings %v: skipped_by_fold without a skipped point", row.Settings)
	}
}

// Run gives each model's search on each fold Options.TimeBudget: with a
// budget shorter than any point, itemknn fits its first point alone and
// its row says what was skipped; without one, nothing is.
func TestRun_timeBudget(t *testing.T) {
	d := clustered(5, 150, 90, 3, 16)
	opt := Options{Folds: 1, Seed: 1, Models: []string{"itemknn"}, Grid: Grid{K: []int{1, 2}}, TimeBudget: time.Nanosecond}
	rep, err := Run(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	row := rep.Rows[0]
	if row.Params["k"] != 1 || !strings.HasPrefix(row.Settings["skipped_by_fold"], "k=2: predicted ") || !strings.HasPrefix(row.Settings["points_by_fold"], "k=1 ") {
		t.Errorf("params %v, settings %v", row.Params, row.Settings)
	}
	opt.TimeBudget = 0
	if rep, err = Run(context.Background(), d, opt); err != nil {
		t.Fatal(err)
	}
	if row := rep.Rows[0]; row.Params["k"] != 8 || row.Settings["skipped_by_fold"] != "" {
		t.Errorf("without a budget: params %v, skipped %q", row.Params, row.Settings["skipped_by_fold"])
	}
}
