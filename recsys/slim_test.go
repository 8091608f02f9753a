package recsys

import (
	"context"
	"testing"
)

// The fsSLIM problem for column j, over w ≥ 0 supported on KNN(j),
//
//	f(w) = ½‖x_j − Xw‖² + (β/2)‖w‖² + λ Σ w_l,
//
// is convex; w is optimal iff for every l ∈ KNN(j), with the residual
// r = x_j − Xw and ∂_l = −x_lᵀr + βw_l + λ the partial derivative:
// ∂_l = 0 when w_l > 0 and ∂_l ≥ 0 when w_l = 0 (the multiplier of w_l ≥ 0
// is ∂_l). That is x_lᵀr − βw_l = λ, resp. x_lᵀr ≤ λ.
func TestSLIM_Fit_KKT(t *testing.T) {
	for _, tc := range []struct {
		seed       uint64
		k          int
		l1, l2     float64
		minPos     int // positive weights expected overall, so the test bites
		minTightZ0 int // zero weights with x_lᵀr < λ strictly
	}{
		{1, 8, 0.5, 0.3, 20, 5},
		{2, 15, 2, 1, 10, 5},
		{3, 30, 0.1, 0.1, 50, 1},
	} {
		x, d := randomMatrix(t, tc.seed, 60, 25, 0.2)
		m := &ItemP{name: "slim"}
		if err := m.Fit(context.Background(), x, Params{K: tc.k, L1: tc.l1, L2: tc.l2, Tol: 1e-13, MaxIter: 100000}); err != nil {
			t.Fatal(err)
		}
		knn, _ := ItemCosineKNN(context.Background(), x, tc.k, nil)
		pos, zeros := 0, 0
		for j := range x.Items() {
			w := m.Similar(uint32(j))
			r := make([]float64, x.Users())
			for u := range r {
				if d[u][j] {
					r[u] = 1
				}
			}
			for _, e := range w {
				if _, ok := inList(knn.Row(j), int(e.Index)); !ok {
					t.Fatalf("item %d: weight on %d outside KNN(j)", j, e.Index)
				}
				if e.Value <= 0 {
					t.Fatalf("item %d: stored weight %g ≤ 0", j, e.Value)
				}
				for u := range r {
					if d[u][e.Index] {
						r[u] -= e.Value
					}
				}
			}
			for _, f := range knn.Row(j) {
				l := int(f.Index)
				g := 0.0
				for u := range r {
					if d[u][l] {
						g += r[u]
					}
				}
				wl, _ := inList(w, l)
				if wl > 0 {
					pos++
					if got := g - tc.l2*wl; !closeTo(got, tc.l1, 1e-8) {
						t.Fatalf("seed %d item %d feature %d: w=%g > 0 but x_lᵀr − βw = %g ≠ λ = %g", tc.seed, j, l, wl, got, tc.l1)
					}
				} else {
					if g > tc.l1+1e-8 {
						t.Fatalf("seed %d item %d feature %d: w=0 but x_lᵀr = %g > λ = %g", tc.seed, j, l, g, tc.l1)
					}
					if g < tc.l1-1e-6 {
						zeros++
					}
				}
			}
		}
		if pos < tc.minPos || zeros < tc.minTightZ0 {
			t.Fatalf("seed %d: %d positive weights and %d strict zeros; the data does not exercise both conditions", tc.seed, pos, zeros)
		}
	}
}

// Warm starts change the path, not the optimum.
func TestSLIM_Fit_warmStartSameOptimum(t *testing.T) {
	x, _ := randomMatrix(t, 4, 60, 25, 0.2)
	ctx := context.Background()
	p := Params{K: 10, L1: 2, L2: 0.5, Tol: 1e-13, MaxIter: 100000}
	warm := &ItemP{name: "slim"}
	if err := warm.Fit(ctx, x, Params{K: 10, L1: 8, L2: 0.5, Tol: 1e-13, MaxIter: 100000}); err != nil {
		t.Fatal(err)
	}
	cold, hot := &ItemP{name: "slim"}, &ItemP{name: "slim"}
	if err := cold.Fit(ctx, x, p); err != nil {
		t.Fatal(err)
	}
	p.Init = warm
	if err := hot.Fit(ctx, x, p); err != nil {
		t.Fatal(err)
	}
	for j := range x.Items() {
		a, b := cold.Similar(uint32(j)), hot.Similar(uint32(j))
		if len(a) != len(b) {
			t.Fatalf("item %d: %d vs %d weights", j, len(a), len(b))
		}
		for k := range a {
			if a[k].Index != b[k].Index || !closeTo(a[k].Value, b[k].Value, 1e-9) {
				t.Fatalf("item %d: %+v vs %+v", j, a[k], b[k])
			}
		}
	}
}

// Fitting a whole grid at once (each item's Gram matrix counted once at the
// largest k, every candidate solved on its leading block) gives the same
// models, byte for byte, as one fit per candidate with the search's warm
// starts; with and without a neighbour cache, and with few popular items
// so that every counting path of the Gram matrices is used.
func TestSLIM_FitGrid_sameAsOneByOne(t *testing.T) {
	ctx := context.Background()
	x := generated(t, 4, 300, 120, 20)
	grid := Grid{K: []int{3, 8, 20, 40}, SLIM: [][2]float64{{1, 1}, {0.1, 1}, {0.5, 0.3}}}
	defer func(p int) { slimPopularItems = p }(slimPopularItems)
	for _, popular := range []int{2048, 10} {
		slimPopularItems = popular
		for _, cached := range []bool{false, true} {
			cands := slimCandidates(grid, Caps{Items: 1000})
			var cache *NeighbourCache
			if cached {
				cache = NewNeighbourCache(x, 40)
			}
			for c := range cands {
				cands[c].Cache = cache
			}
			fitted, err := slimFitGrid(ctx, x, cands)
			if err != nil {
				t.Fatal(err)
			}
			if len(fitted) != len(cands) {
				t.Fatalf("%d models for %d candidates", len(fitted), len(cands))
			}
			var prev Model
			differ := 0 // warm starts must matter for the test to bite
			for c, p := range cands {
				if c > 0 && WarmStart(cands[c-1], p) {
					p.Init = prev
				}
				m := &ItemP{name: "slim"}
				if err := m.Fit(ctx, x, p); err != nil {
					t.Fatal(err)
				}
				want, _ := m.MarshalBinary()
				got, _ := fitted[c]().MarshalBinary()
				if string(got) != string(want) {
					t.Fatalf("P=%d cached=%v candidate %+v: the grid fit differs from the single fit", popular, cached, p)
				}
				if p.Init != nil {
					cold := &ItemP{name: "slim"}
					p.Init = nil
					if err := cold.Fit(ctx, x, p); err != nil {
						t.Fatal(err)
					}
					if b, _ := cold.MarshalBinary(); string(b) != string(want) {
						differ++
					}
				}
				prev = m
			}
			if differ == 0 {
				t.Fatalf("no warm start changed a model: the test cannot tell whether they are applied")
			}
		}
	}
}
