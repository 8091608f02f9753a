package recsys

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// tinyX is the hand-computed example of the EASE and RP3β tests: users ×
// items
//
//	u0: 1 1 0
//	u1: 1 0 1
//	u2: 1 1 1
//	u3: 0 1 0
func tinyX(t *testing.T) *Matrix {
	t.Helper()
	x, err := NewMatrix(4, 3, []Pair{{0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 0}, {2, 1}, {2, 2}, {3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// easeB returns B_ij of a fitted EASE (dense or sparse) as a dense n×n.
func easeB(m *EASE) [][]float64 {
	b := make([][]float64, m.nItems)
	for i := range b {
		b[i] = make([]float64, m.nItems)
		if m.side != nil {
			continue
		}
		if a, ok := slices.BinarySearch(m.active, uint32(i)); ok {
			for c, j := range m.active {
				b[i][j] = float64(m.b[a*len(m.active)+c])
			}
		}
	}
	if m.side != nil {
		for j := range m.nItems {
			for _, e := range m.side.fwd.Row(j) {
				b[e.Index][j] = e.Value
			}
		}
	}
	return b
}

func fitEASE(t *testing.T, x *Matrix, p Params) *EASE {
	t.Helper()
	m := &EASE{}
	if err := m.Fit(context.Background(), x, p); err != nil {
		t.Fatal(err)
	}
	return m
}

func assertMatrix(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if !closeTo(got[i][j], want[i][j], tol) {
				t.Fatalf("%s: [%d][%d] = %.9g, want %.9g", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// On tinyX, G = XᵀX = [[3,2,2],[2,3,1],[2,1,2]]; with λ = 1,
// A = G + I = [[4,2,2],[2,4,1],[2,1,3]], det A = 24 and
// P = A⁻¹ = adj(A)/24 = [[11,−4,−6],[−4,8,0],[−6,0,12]]/24, so
// B_ij = −P_ij/P_jj: B_01 = 4/8, B_02 = 6/12, B_10 = 4/11, B_20 = 6/11,
// B_12 = B_21 = 0. (Column 1 as a ridge regression of x_1 on x_0, x_2:
// [[4,2],[2,3]] b = [2,1] gives b = [1/2, 0].)
func TestEASE_Fit_handComputed(t *testing.T) {
	x := tinyX(t)
	want := [][]float64{{0, 0.5, 0.5}, {4.0 / 11, 0, 0}, {6.0 / 11, 0, 0}}
	dense := fitEASE(t, x, Params{Extra: map[string]float64{"lambda": 1}})
	if dense.side != nil {
		t.Fatal("3 items fitted sparse")
	}
	assertMatrix(t, "dense B", easeB(dense), want, 1e-7) // float32 weights
	// The sparse variant with every other item as a neighbour is the same.
	sparse := fitEASE(t, x, Params{K: 2, Extra: map[string]float64{"lambda": 1, "max_dense": 0}})
	if sparse.side == nil {
		t.Fatal("max_dense 0 fitted dense")
	}
	assertMatrix(t, "sparse B, k = 2", easeB(sparse), want, 1e-12)
	// k = 1: cos(0,1) = 2/3, cos(0,2) = 2/√6, cos(1,2) = 1/√6, so KNN(0) =
	// {2}, KNN(1) = KNN(2) = {0}, and each column is a one-item ridge
	// regression G_ij/(G_ii + λ): B_20 = 2/3, B_01 = B_02 = 2/4.
	one := fitEASE(t, x, Params{K: 1, Extra: map[string]float64{"lambda": 1, "max_dense": 0}})
	assertMatrix(t, "sparse B, k = 1", easeB(one), [][]float64{{0, 0.5, 0.5}, {0, 0, 0}, {2.0 / 3, 0, 0}}, 1e-12)

	scores := make([]float64, 3)
	dense.Score([]uint32{1}, scores)
	if !closeTo(scores[0], 4.0/11, 1e-7) || scores[1] != 0 || scores[2] != 0 {
		t.Fatalf("scores of history {1} = %v, want [4/11 0 0]", scores)
	}
	if got := dense.Params(); got["lambda"] != 1 || len(got) != 1 {
		t.Fatalf("dense params %v", got)
	}
	if got := one.Params(); got["lambda"] != 1 || got["k"] != 1 {
		t.Fatalf("sparse params %v", got)
	}
	exp := one.Explain([]uint32{0, 2}, []uint32{0, 1}, 5)
	if len(exp[0]) != 1 || exp[0][0].Index != 2 || !closeTo(exp[0][0].Weight, 2.0/3, 1e-12) ||
		len(exp[1]) != 1 || exp[1][0].Index != 0 || exp[1][0].Weight != 0.5 {
		t.Fatalf("explanations %v", exp)
	}
}

// gaussJordanInverse inverts a by Gauss–Jordan elimination with partial
// pivoting: a method independent of the Cholesky factorisation Fit uses.
func gaussJordanInverse(a [][]float64) [][]float64 {
	n := len(a)
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, 2*n)
		copy(w[i], a[i])
		w[i][n+i] = 1
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(w[r][c]) > math.Abs(w[p][c]) {
				p = r
			}
		}
		w[c], w[p] = w[p], w[c]
		inv := 1 / w[c][c]
		for k := range w[c] {
			w[c][k] *= inv
		}
		for r := range n {
			if r != c && w[r][c] != 0 {
				f := w[r][c]
				for k := range w[r] {
					w[r][k] -= f * w[c][k]
				}
			}
		}
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = w[i][n:]
	}
	return out
}

// B = I − P·diag(1/diag P) with P = (XᵀX + λI)⁻¹ from an independent
// inverse, and diag(B) = 0, on generated data with an item nobody has.
func TestEASE_Fit_closedForm(t *testing.T) {
	_, d := randomMatrix(t, 31, 60, 24, 0.2)
	var pairs []Pair
	for u, row := range d {
		for i, ok := range row {
			if ok {
				pairs = append(pairs, Pair{User: uint32(u), Item: uint32(i)})
			}
		}
	}
	x, err := NewMatrix(60, 25, pairs) // item 24 has no positive
	if err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{0.5, 5, 50} {
		a := make([][]float64, 25)
		for i := range a {
			a[i] = make([]float64, 25)
			a[i][i] = lambda
		}
		for _, row := range d {
			for i, oi := range row {
				for j, oj := range row {
					if oi && oj {
						a[i][j]++
					}
				}
			}
		}
		p := gaussJordanInverse(a)
		want := make([][]float64, 25)
		for i := range want {
			want[i] = make([]float64, 25)
			for j := range want[i] {
				if i == j {
					want[i][j] = 1
				}
				want[i][j] -= p[i][j] / p[j][j]
			}
		}
		m := fitEASE(t, x, Params{Extra: map[string]float64{"lambda": lambda}})
		b := easeB(m)
		for i := range b {
			if b[i][i] != 0 {
				t.Fatalf("λ %g: B_%d%d = %g, want 0", lambda, i, i, b[i][i])
			}
		}
		assertMatrix(t, "B", b, want, 1e-6)
	}
}

// Every item pair co-occurs, so with k_max ≥ n−1 every other item is a
// neighbour and the sparse variant solves the dense one's equations.
func TestEASE_sparseEqualsDenseAtFullK(t *testing.T) {
	x, _ := randomMatrix(t, 32, 40, 9, 0.6)
	nb, err := ItemCosineKNN(context.Background(), x, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j := range x.Items() {
		if len(nb.Row(j)) != x.Items()-1 {
			t.Fatalf("item %d co-occurs with %d items, the test needs %d", j, len(nb.Row(j)), x.Items()-1)
		}
	}
	dense := fitEASE(t, x, Params{Extra: map[string]float64{"lambda": 3}})
	for _, k := range []int{8, 100} {
		sparse := fitEASE(t, x, Params{K: k, Extra: map[string]float64{"lambda": 3, "max_dense": 0}})
		assertMatrix(t, "sparse vs dense B", easeB(sparse), easeB(dense), 1e-6)
		a, b := make([]float64, 9), make([]float64, 9)
		for u := range x.Users() {
			dense.Score(x.Row(u), a)
			sparse.Score(x.Row(u), b)
			for i := range a {
				if !closeTo(a[i], b[i], 1e-6) {
					t.Fatalf("k %d user %d item %d: sparse %g, dense %g", k, u, i, b[i], a[i])
				}
			}
		}
	}
	// With fewer neighbours the variants differ.
	small := fitEASE(t, x, Params{K: 2, Extra: map[string]float64{"lambda": 3, "max_dense": 0}})
	if n := small.side.fwd.Len(); n > 2*x.Items() {
		t.Fatalf("k = 2 kept %d weights", n)
	}
}

// A new event in the live history changes the scores at once, by the
// consumed item's weights: score(h ∪ {i}) − score(h) = B_i· for EASE and
// W'_i· for RP3β.
func TestEASE_RP3Beta_Score_followsHistory(t *testing.T) {
	x := generated(t, 33, 200, 60, 10)
	models := map[string]Model{
		"ease dense":  fitEASE(t, x, Params{Extra: map[string]float64{"lambda": 10}}),
		"ease sparse": fitEASE(t, x, Params{K: 10, Extra: map[string]float64{"lambda": 10, "max_dense": 0}}),
		"rp3beta":     fitted(t, "rp3beta", x, Params{K: 10, Extra: map[string]float64{"beta": 0.5}}),
	}
	h := []uint32{3, 17, 40}
	for name, m := range models {
		before, after, row := make([]float64, 60), make([]float64, 60), make([]float64, 60)
		m.Score(h, before)
		m.Score([]uint32{3, 17, 25, 40}, after)
		m.Score([]uint32{25}, row)
		changed := false
		for j := range before {
			if !closeTo(after[j]-before[j], row[j], 1e-9) {
				t.Fatalf("%s item %d: the new event added %g, its row holds %g", name, j, after[j]-before[j], row[j])
			}
			changed = changed || row[j] != 0
		}
		if !changed {
			t.Fatalf("%s: item 25's row is empty", name)
		}
		if slices.Equal(TopN(before, x.Popularity(), h, 5), TopN(after, x.Popularity(), []uint32{3, 17, 25, 40}, 5)) {
			t.Fatalf("%s: the top 5 did not change after the new event", name)
		}
	}
}

func TestEASE_Fit_rejectsBadSettings(t *testing.T) {
	x := tinyX(t)
	for _, p := range []Params{
		{Extra: map[string]float64{"lambda": 0}},
		{Extra: map[string]float64{"lambda": math.Inf(1)}},
		{Extra: map[string]float64{"lambda": 1, "max_dense": EASEMaxDenseCap + 1}},
	} {
		if err := (&EASE{}).Fit(context.Background(), x, p); err == nil {
			t.Errorf("Fit accepted %v", p.Extra)
		}
	}
	t.Setenv(EnvEASEMaxDense, "lots")
	if err := (&EASE{}).Fit(context.Background(), x, Params{}); err == nil {
		t.Errorf("Fit accepted %s=lots", EnvEASEMaxDense)
	}
	t.Setenv(EnvEASEMaxDense, "2")
	if m := fitEASE(t, x, Params{}); m.side == nil || m.k != DefaultEASENeighbours {
		t.Errorf("%s=2 with 3 items did not fit sparse with k = %d", EnvEASEMaxDense, DefaultEASENeighbours)
	}
}

// easeReferenceColumns are column j of the sparse variant for every λ,
// computed the direct way: G over S ∪ {j} counted by intersecting the
// items' user sets (has[u][i]: X_ui = 1), then (G_SS + λI) b = G_Sj by
// Cholesky, in a (k+1)-strided buffer as the solver before the shared
// pair counter (issue 15).
func easeReferenceColumns(t *testing.T, x *Matrix, has [][]bool, j int, feats []Neighbour, lambdas []float64) [][]Neighbour {
	t.Helper()
	k := len(feats)
	out := make([][]Neighbour, len(lambdas))
	if k == 0 {
		return out
	}
	dim := k + 1
	items := make([]int, 0, dim)
	for _, f := range feats {
		items = append(items, int(f.Index))
	}
	items = append(items, j)
	counts := make([]float64, dim*dim)
	for a := range dim {
		for b := a; b < dim; b++ {
			for _, u := range x.Col(items[a]) {
				if has[u][items[b]] {
					counts[a*dim+b]++
				}
			}
		}
	}
	for c, lambda := range lambdas {
		g := slices.Clone(counts)
		rhs := make([]float64, k)
		for a := range k {
			rhs[a] = g[a*dim+k]
			g[a*dim+a] += lambda
		}
		tr, ok := lapack64.Potrf(blas64.Symmetric{N: k, Stride: dim, Data: g, Uplo: blas.Upper})
		if !ok {
			t.Fatalf("item %d: not positive definite", j)
		}
		lapack64.Potrs(tr, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: rhs})
		for a, f := range feats {
			if rhs[a] != 0 {
				out[c] = append(out[c], Neighbour{Index: f.Index, Value: rhs[a]})
			}
		}
		slices.SortFunc(out[c], CompareNeighbours)
	}
	return out
}

// The sparse variant's grid fit (one Gram count per item for every λ)
// gives each λ the model of its own Fit byte for byte, and both give, to
// the bit, the columns of the direct computation — with the pair counter's
// popular block holding every item and almost none, and k_max past
// LAPACK's block size so the blocked factorisation runs. Below the dense
// limit the grid is fitted one by one (nil).
func TestEASE_FitGrid_sameAsOneByOne(t *testing.T) {
	ctx := context.Background()
	x := generated(t, 7, 400, 150, 30)
	lambdas := []float64{1, 30, 1000}
	defer func(p int) { slimPopularItems = p }(slimPopularItems)
	for _, popular := range []int{2048, 5} {
		slimPopularItems = popular
		for _, cached := range []bool{false, true} {
			var cache *NeighbourCache
			if cached {
				cache = NewNeighbourCache(x, 100)
			}
			cands := make([]Params, len(lambdas))
			for c, l := range lambdas {
				cands[c] = Params{K: 100, Cache: cache, Extra: map[string]float64{"lambda": l, "max_dense": 0}}
			}
			fitted, err := easeFitGrid(ctx, x, cands)
			if err != nil {
				t.Fatal(err)
			}
			if len(fitted) != len(cands) {
				t.Fatalf("%d models for %d candidates", len(fitted), len(cands))
			}
			nb, err := ItemCosineKNN(ctx, x, 100, nil)
			if err != nil {
				t.Fatal(err)
			}
			if nb.MaxRow() <= 64 {
				t.Fatalf("the longest list has %d items: the blocked Cholesky is not exercised", nb.MaxRow())
			}
			singles := make([]*EASE, len(cands))
			for c, p := range cands {
				singles[c] = fitEASE(t, x, p)
				want, _ := singles[c].MarshalBinary()
				grid := fitted[c]()
				if got, _ := grid.MarshalBinary(); string(got) != string(want) {
					t.Fatalf("P=%d cached=%v λ=%g: the grid fit differs from the single fit", popular, cached, lambdas[c])
				}
			}
			if popular != 5 || cached {
				continue
			}
			has := make([][]bool, x.Users())
			for u := range has {
				has[u] = make([]bool, x.Items())
				for _, i := range x.Row(u) {
					has[u][i] = true
				}
			}
			for j := range x.Items() {
				ref := easeReferenceColumns(t, x, has, j, nb.Row(j), lambdas)
				for c := range cands {
					if got := singles[c].side.fwd.Row(j); !slices.Equal(got, ref[c]) {
						t.Fatalf("λ=%g item %d: %v, the direct computation %v", lambdas[c], j, got, ref[c])
					}
				}
			}
		}
	}
	dense := []Params{{Extra: map[string]float64{"lambda": 1}}, {Extra: map[string]float64{"lambda": 30}}}
	if fitted, err := easeFitGrid(ctx, x, dense); err != nil || fitted != nil {
		t.Fatalf("below the dense limit: %d models, %v; want none (one fit each)", len(fitted), err)
	}
}
