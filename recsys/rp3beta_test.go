package recsys

import (
	"context"
	"math"
	"testing"

	"github.com/recsys-engine/recsys/recsys/internal/brute"
)

// On tinyX (user degrees 2, 2, 3, 1; item degrees 3, 3, 2) the walk
// probabilities W(i, j) = Σ_u X_ui X_uj / (c(i)·c(u)) are
//
//	W(0,·) = (1/3)·(1/2 + 1/2 + 1/3, 1/2 + 1/3, 1/2 + 1/3) = (8, 5, 5)/18
//	W(1,·) = (1/3)·(1/2 + 1/3, 1/2 + 1/3 + 1, 1/3)        = (5, 11, 2)/18
//	W(2,·) = (1/2)·(1/2 + 1/3, 1/3, 1/2 + 1/3)             = (5, 2, 5)/12
//
// each row summing to 1; RP3β divides column j by c(j)^β and drops j = i.
func TestRP3Beta_Fit_handComputed(t *testing.T) {
	x := tinyX(t)
	for _, tc := range []struct {
		beta float64
		k    int
		want [][]Neighbour
	}{
		{0, 2, [][]Neighbour{{{1, 5.0 / 18}, {2, 5.0 / 18}}, {{0, 5.0 / 18}, {2, 2.0 / 18}}, {{0, 5.0 / 12}, {1, 2.0 / 12}}}},
		{1, 2, [][]Neighbour{{{2, 5.0 / 36}, {1, 5.0 / 54}}, {{0, 5.0 / 54}, {2, 1.0 / 18}}, {{0, 5.0 / 36}, {1, 2.0 / 36}}}},
		{1, 1, [][]Neighbour{{{2, 5.0 / 36}}, {{0, 5.0 / 54}}, {{0, 5.0 / 36}}}},
	} {
		m := fitted(t, "rp3beta", x, Params{K: tc.k, Extra: map[string]float64{"beta": tc.beta}}).(*RP3Beta)
		for i, want := range tc.want {
			got := m.Similar(uint32(i))
			if len(got) != len(want) {
				t.Fatalf("β %g k %d row %d: %v, want %v", tc.beta, tc.k, i, got, want)
			}
			for n := range want {
				if got[n].Index != want[n].Index || !closeTo(got[n].Value, want[n].Value, 1e-15) {
					t.Fatalf("β %g k %d row %d: %v, want %v", tc.beta, tc.k, i, got, want)
				}
			}
		}
		if p := m.Params(); p["k"] != float64(tc.k) || p["beta"] != tc.beta {
			t.Fatalf("params %v", p)
		}
	}
	// score(u, j) = Σ_{i ∈ O⁺u} W'(i, j): history {1} at β = 0, k = 2.
	m := fitted(t, "rp3beta", x, Params{K: 2, Extra: map[string]float64{"beta": 0}})
	scores := make([]float64, 3)
	m.Score([]uint32{1}, scores)
	if !closeTo(scores[0], 5.0/18, 1e-15) || scores[1] != 0 || !closeTo(scores[2], 2.0/18, 1e-15) {
		t.Fatalf("scores of history {1} = %v", scores)
	}
	exp := m.(Explainer).Explain([]uint32{0, 1}, []uint32{2}, 5)
	if len(exp[0]) != 2 || exp[0][0].Index != 0 || !closeTo(exp[0][0].Weight, 5.0/18, 1e-15) || exp[0][1].Index != 1 {
		t.Fatalf("explanations of item 2: %v", exp)
	}
}

// P3's rows are probability distributions, and the fitted rows are the
// brute-force W' = W·diag(c^−β) truncated to the k best j ≠ i.
func TestRP3Beta_Fit_equalsBruteForce(t *testing.T) {
	x, d := randomMatrix(t, 34, 50, 30, 0.15)
	cu, ci := brute.RowCounts(d), brute.ColCounts(d)
	acc := make([]float64, x.Items())
	for i := range x.Items() {
		touched := rp3Walk(x, i, acc, nil)
		sum := 0.0
		for _, j := range touched {
			sum += acc[j]
			acc[j] = 0
		}
		if want := math.Min(float64(ci[i]), 1); !closeTo(sum, want, 1e-12) {
			t.Fatalf("row %d of P3 sums to %g, want %g", i, sum, want)
		}
	}
	for _, beta := range []float64{0, 0.3, 1} {
		for _, k := range []int{3, 10, 40} {
			m := fitted(t, "rp3beta", x, Params{K: k, Extra: map[string]float64{"beta": beta}}).(*RP3Beta)
			for i := range x.Items() {
				row := make([]float64, x.Items())
				for j := range row {
					for u := range d {
						if d[u][i] && d[u][j] {
							row[j] += 1 / float64(ci[i]*cu[u])
						}
					}
					if row[j] > 0 {
						row[j] /= math.Pow(float64(ci[j]), beta)
					}
				}
				want := bruteKNN(row, i, k)
				got := m.Similar(uint32(i))
				if len(got) != len(want) {
					t.Fatalf("β %g k %d row %d: %d entries, want %d", beta, k, i, len(got), len(want))
				}
				// Exact ties may come out in either order after rounding:
				// compare the values by position and each kept j's value.
				seen := map[uint32]bool{}
				for n := range want {
					j := got[n].Index
					if !closeTo(got[n].Value, want[n].Value, 1e-12) || !closeTo(got[n].Value, row[j], 1e-12) || int(j) == i || seen[j] {
						t.Fatalf("β %g k %d row %d: %v, want %v", beta, k, i, got, want)
					}
					seen[j] = true
				}
			}
		}
	}
}

func TestRP3Beta_Fit_rejectsBadBeta(t *testing.T) {
	for _, b := range []float64{-0.5, math.NaN(), math.Inf(1)} {
		if err := (&RP3Beta{}).Fit(context.Background(), tinyX(t), Params{Extra: map[string]float64{"beta": b}}); err == nil {
			t.Errorf("Fit accepted β = %v", b)
		}
	}
}

// The grids: λ ascending for EASE, k capped by the data × β for RP3β, and
// Grid.Extra replacing the defaults.
func TestEASE_RP3Beta_candidates(t *testing.T) {
	c := easeCandidates(Grid{K: []int{10, 20}}, Caps{Items: 5})
	if len(c) != len(DefaultEASELambdas) || c[0].Extra["lambda"] != DefaultEASELambdas[0] || c[0].K != 0 {
		t.Fatalf("ease candidates %v", c)
	}
	c = easeCandidates(Grid{Extra: map[string][]map[string]float64{"ease": {{"lambda": 7}}}}, Caps{})
	if len(c) != 1 || c[0].Extra["lambda"] != 7 {
		t.Fatalf("ease candidates from the grid %v", c)
	}
	c = rp3Candidates(Grid{K: []int{10, 20, 50}}, Caps{Items: 15})
	if len(c) != 2*len(DefaultRP3Betas) || c[0].K != 10 || c[len(c)-1].K != 20 || c[1].Extra["beta"] != DefaultRP3Betas[1] {
		t.Fatalf("rp3beta candidates %v", c)
	}
}

// The grid fit (one walk per item for every k and β) gives every candidate
// the model of its own Fit byte for byte, k below the longest row included
// (where the prefix of the k_max best must be the k best).
func TestRP3Beta_FitGrid_sameAsOneByOne(t *testing.T) {
	ctx := context.Background()
	x := generated(t, 5, 300, 120, 20)
	cands := rp3Candidates(Grid{K: []int{3, 10, 40, 500}}, Caps{Items: 1000})
	if len(cands) != 4*len(DefaultRP3Betas) {
		t.Fatalf("%d candidates", len(cands))
	}
	fitted, err := rp3FitGrid(ctx, x, cands)
	if err != nil {
		t.Fatal(err)
	}
	if len(fitted) != len(cands) {
		t.Fatalf("%d models for %d candidates", len(fitted), len(cands))
	}
	for c, p := range cands {
		one := &RP3Beta{}
		if err := one.Fit(ctx, x, p); err != nil {
			t.Fatal(err)
		}
		want, _ := one.MarshalBinary()
		grid := fitted[c]()
		if got, _ := grid.MarshalBinary(); string(got) != string(want) {
			t.Fatalf("candidate %+v: the grid fit differs from the single fit", p)
		}
		if p.K < 40 && one.side.rev.MaxRow() != p.K {
			t.Fatalf("k %d: the longest row has %d items, the test needs truncated rows", p.K, one.side.rev.MaxRow())
		}
	}
}

// Past its memory bound the grid is fitted one candidate at a time (nil).
func TestRP3Beta_FitGrid_memoryBound(t *testing.T) {
	x := generated(t, 5, 300, 120, 20)
	cands := rp3Candidates(Grid{K: []int{3, 40}}, Caps{Items: 1000})
	defer func(m int64) { rp3GridMemory = m }(rp3GridMemory)
	need := int64(len(DefaultRP3Betas)) * int64(x.Items()) * 40 * 16
	for _, c := range []struct {
		bound int64
		grid  bool
	}{{need, true}, {need - 1, false}} {
		rp3GridMemory = c.bound
		fitted, err := rp3FitGrid(context.Background(), x, cands)
		if err != nil || (fitted != nil) != c.grid {
			t.Fatalf("bound %d for %d bytes: %d models, %v; want the grid %v", c.bound, need, len(fitted), err, c.grid)
		}
	}
}
