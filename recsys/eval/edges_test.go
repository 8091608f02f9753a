package eval

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// extendEdges on a known objective of k alone, the validation ADG −|k −
// peak|, over the grid {10, 20, 50, 100} (steps ×2 up from 100, ÷2 down
// from 10), by hand.
func TestExtendEdges_byHand(t *testing.T) {
	grid := []int{10, 20, 50, 100}
	for _, tc := range []struct {
		name      string
		peak      float64
		limit     int
		capAt     int // gen gives nothing for k above it (0: no cap)
		maxK      int // Tuning.MaxK: admit no k above it (0: no bound)
		chosen    int
		extended  []string
		edges     []string
		searchedK []int
	}{
		// 100 is the grid's best; 200 beats it, 400 ties 200 and is not
		// chosen (the first of equals stays): 200 is inside the grid.
		{name: "peak inside the extension", peak: 300, limit: 2, chosen: 200, extended: []string{"k=200", "k=400"}},
		// Still rising at 400 after two steps: flagged.
		{name: "still at the edge", peak: 10000, limit: 2, chosen: 400, extended: []string{"k=200", "k=400"}, edges: []string{"k=400"}},
		// Below: 10 → 5 → round(2.5) = 3.
		{name: "lower edge", peak: 1, limit: 2, chosen: 3, extended: []string{"k=5", "k=3"}, edges: []string{"k=3"}},
		// No extension allowed: the edge is only reported.
		{name: "no extension", peak: 10000, limit: 0, chosen: 100, edges: []string{"k=100"}},
		// The data caps k at 100: no step above and no flag.
		{name: "capped by the data", peak: 10000, limit: 2, capAt: 100, chosen: 100},
		// The memory budget bounds k at 300: 200 is tried, 400 is not,
		// and 200 is flagged as an edge (a larger k was not tried).
		{name: "bounded by the budget", peak: 10000, limit: 2, maxK: 300, chosen: 200, extended: []string{"k=200"}, edges: []string{"k=200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cands []recsys.Params
			for _, k := range grid {
				cands = append(cands, recsys.Params{K: k})
			}
			adg := func(p recsys.Params) float64 { return -math.Abs(float64(p.K) - tc.peak) }
			best := cands[0]
			for _, p := range cands {
				if adg(p) > adg(best) {
					best = p
				}
			}
			gen := func(d dimension, at recsys.Params, v float64) []recsys.Params {
				if tc.capAt > 0 && v > float64(tc.capAt) {
					return nil
				}
				return []recsys.Params{d.set(at, v)}
			}
			try := func(cs []recsys.Params) (recsys.Params, error) {
				for _, p := range cs {
					if adg(p) > adg(best) {
						best = p
					}
				}
				return best, nil
			}
			got, rep, err := extendEdges(best, dimensions(cands, "k", false), cands, extension{limit: tc.limit, gen: gen, try: try, admit: Tuning{MaxK: tc.maxK}.admit})
			if err != nil {
				t.Fatal(err)
			}
			extended, edges := rep.extended, rep.edges
			if got.K != tc.chosen || !slices.Equal(extended, tc.extended) || !slices.Equal(edges, tc.edges) {
				t.Errorf("chose k=%d, extended %v, edges %v; want k=%d, %v, %v", got.K, extended, edges, tc.chosen, tc.extended, tc.edges)
			}
		})
	}
}

// A secondary dimension is extended from the chosen point alone: with the
// ADG −(l2 − 1000)² over l2 ∈ {0.1, 1, 10} at k = 50, l2 goes 20 then 40
// (the ×10 step of the grid capped at MaxStep) and stays at the edge; ℓ1
// (one value) is no dimension.
func TestExtendEdges_secondary(t *testing.T) {
	var cands []recsys.Params
	for _, l2 := range []float64{10, 1, 0.1} {
		cands = append(cands, recsys.Params{K: 50, L1: 1, L2: l2})
	}
	dims := dimensions(cands, "k", false)
	if len(dims) != 1 || dims[0].name != "l2" {
		t.Fatalf("dimensions %v", dims)
	}
	adg := func(p recsys.Params) float64 { return -(p.L2 - 1000) * (p.L2 - 1000) }
	best := cands[0]
	var tried []recsys.Params
	got, rep, err := extendEdges(best, dims, cands, extension{limit: 2,
		gen: func(d dimension, at recsys.Params, v float64) []recsys.Params { return []recsys.Params{d.set(at, v)} },
		try: func(cs []recsys.Params) (recsys.Params, error) {
			tried = append(tried, cs...)
			for _, p := range cs {
				if adg(p) > adg(best) {
					best = p
				}
			}
			return best, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	extended, edges := rep.extended, rep.edges
	l2s := func(ps []recsys.Params) []float64 {
		var out []float64
		for _, p := range ps {
			if p.K != 50 || p.L1 != 1 {
				t.Errorf("extension changed k or ℓ1: %+v", p)
			}
			out = append(out, p.L2)
		}
		return out
	}
	if got.L2 != 40 || !slices.Equal(l2s(tried), []float64{20, 40}) || !slices.Equal(extended, []string{"l2=20", "l2=40"}) || !slices.Equal(edges, []string{"l2=40"}) {
		t.Errorf("chose %+v after %+v; extended %v, edges %v", got, tried, extended, edges)
	}
}

// Tune extends k when its choice sits at the top of a grid far too small
// for the data (k ∈ {1, 2}: item KNN on clustered data wants more
// neighbours), and reports the edge when told not to extend; the report
// and the table flag it.
func TestTune_extendsGridEdge(t *testing.T) {
	d := clustered(5, 150, 90, 3, 16)
	s, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	cache := recsys.NewNeighbourCache(s.Train, 2)
	tuned, err := Tune(context.Background(), "itemknn", s, cache, Tuning{Grid: recsys.Grid{K: []int{1, 2}}, ValidationUsers: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tuned.Extended, []string{"k=4", "k=8"}) || !slices.Equal(tuned.AtEdge, []string{"k=8"}) || tuned.Params.K != 8 {
		t.Errorf("extended %v, at edge %v, k = %d; want k=4 k=8, k=8, 8", tuned.Extended, tuned.AtEdge, tuned.Params.K)
	}
	if len(tuned.Candidates) != 4 {
		t.Errorf("%d candidates, want 4", len(tuned.Candidates))
	}
	none, err := Tune(context.Background(), "itemknn", s, cache, Tuning{Grid: recsys.Grid{K: []int{1, 2}}, ValidationUsers: -1, Extend: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Extended) != 0 || !slices.Equal(none.AtEdge, []string{"k=2"}) || none.Params.K != 2 {
		t.Errorf("without extension: extended %v, at edge %v, k = %d", none.Extended, none.AtEdge, none.Params.K)
	}

	opt := Options{Folds: 1, Seed: 1, Models: []string{"itemknn"}, Grid: Grid{K: []int{1, 2}}}
	rep, err := Run(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	row := rep.Rows[0]
	if row.Settings["grid_edge"] != "k=8" || row.Settings["grid_extended_by_fold"] != "k=4 k=8" || !strings.Contains(row.Settings["grid"], "k∈{1,2,4,8}") {
		t.Errorf("settings %v", row.Settings)
	}
	var table strings.Builder
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "k=8 (grid edge)") {
		t.Errorf("the table does not flag the edge:\n%s", table.String())
	}
}

// FEBR's own search is extended past its grid too: with two values of k
// and of λ, each choice sits at an end of its grid, so each dimension is
// extended at least once, and the chosen λ is among those searched.
func TestTune_febrExtendsGridEdge(t *testing.T) {
	d := clustered(7, 100, 80, 4, 16)
	s, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	cache := recsys.NewNeighbourCache(s.Train, 20)
	tuned, err := Tune(context.Background(), "febr-i-kunn", s, cache, Tuning{Grid: recsys.Grid{K: []int{10, 20}, Lambda: []float64{1e-3, 1e-2}},
		ValidationUsers: -1, Options: &febr.Options{EvalEvery: 1000, Patience: 2, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var k, lambda bool
	for _, e := range tuned.Extended {
		k = k || strings.HasPrefix(e, "k=")
		lambda = lambda || strings.HasPrefix(e, "lambda=")
	}
	if !k || !lambda {
		t.Errorf("extended %v: want k and λ", tuned.Extended)
	}
	if tuned.ValidationADG <= 0 || febrOptions(tuned.Params) == nil {
		t.Errorf("choice %+v", tuned.Choice)
	}
}

// febr-blend searches each base as Tune searches the model alone, grid
// extension included: on the data of TestTune_extendsGridEdge, where
// itemknn alone extends k ∈ {1, 2} to 4 and 8 and chooses 8, the blend's
// itemknn base is fitted with k = 8, not the grid's 2, and the blend's
// report names the base's extensions.
func TestTune_blendBasesExtendGridEdge(t *testing.T) {
	d := clustered(5, 150, 90, 3, 16)
	s, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	cache := recsys.NewNeighbourCache(s.Train, 2)
	grid := recsys.Grid{K: []int{1, 2}, Lambda: []float64{1e-2}}
	alone, err := Tune(context.Background(), "itemknn", s, cache, Tuning{Grid: grid, ValidationUsers: -1})
	if err != nil {
		t.Fatal(err)
	}
	if alone.Params.K != 8 {
		t.Fatalf("itemknn alone chose k = %d, want 8 (the fixture of TestTune_extendsGridEdge)", alone.Params.K)
	}
	tuned, err := Tune(context.Background(), febr.BlendName, s, cache, Tuning{Grid: grid, ValidationUsers: -1,
		Options: &febr.Options{Seed: 1, Blend: &febr.BlendOptions{Bases: []string{"popular", "itemknn"}}}})
	if err != nil {
		t.Fatal(err)
	}
	blend, ok := tuned.Model.(*febr.Blend)
	if !ok {
		t.Fatalf("model %T", tuned.Model)
	}
	if _, p := blend.Base(1); p.K != alone.Params.K {
		t.Errorf("the blend's itemknn base has k = %d, itemknn alone %d", p.K, alone.Params.K)
	}
	if got := febrOptions(tuned.Params).Blend.Params[1].K; got != 8 {
		t.Errorf("the refit's itemknn base has k = %d, want 8", got)
	}
	// The measures come from the search's own ranks of the choice: those
	// of a validation pass of the chosen model.
	if want, err := Evaluate(context.Background(), tuned.Model, s.Train, s.Validation); err != nil || tuned.Validation != want {
		t.Errorf("the blend's validation measures %v, a validation pass of it %v (%v)", tuned.Validation, want, err)
	}
	if !slices.Equal(tuned.Extended, []string{"itemknn.k=4", "itemknn.k=8"}) || !slices.Equal(tuned.AtEdge, []string{"itemknn.k=8"}) {
		t.Errorf("extended %v, at edge %v; want itemknn.k=4 itemknn.k=8, itemknn.k=8", tuned.Extended, tuned.AtEdge)
	}
	// Told not to extend, the base stays on the grid, at its edge.
	none, err := Tune(context.Background(), febr.BlendName, s, cache, Tuning{Grid: grid, ValidationUsers: -1, Extend: -1,
		Options: &febr.Options{Seed: 1, Blend: &febr.BlendOptions{Bases: []string{"popular", "itemknn"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, p := none.Model.(*febr.Blend).Base(1); p.K != 2 || !slices.Equal(none.AtEdge, []string{"itemknn.k=2"}) {
		t.Errorf("without extension: k = %d, at edge %v; want 2, itemknn.k=2", p.K, none.AtEdge)
	}
	// A model with its own search is no base, as in recsys's base search:
	// refused before its search fits anything.
	fits := 0
	if _, err := Tune(context.Background(), febr.BlendName, s, cache, Tuning{Grid: grid, ValidationUsers: -1, OnFit: func() { fits++ },
		Options: &febr.Options{Seed: 1, Blend: &febr.BlendOptions{Bases: []string{"febr-i-kunn", "itemknn"}}}}); err == nil || !strings.Contains(err.Error(), "febr-i-kunn cannot be a base") || fits != 0 {
		t.Errorf("febr-i-kunn as a base: error %v after %d fits", err, fits)
	}
}
