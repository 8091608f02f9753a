package ltr

import (
	"math"
	"slices"
	"testing"
)

func TestQuantileCuts(t *testing.T) {
	for _, c := range []struct {
		name   string
		sorted []float32
		bins   int
		want   []float32
	}{
		// Five distinct values, at most five bins: one bin per value.
		{"per value", []float32{1, 1, 1, 1, 2, 3, 4, 5}, 5, []float32{1, 2, 3, 4}},
		// Two bins of eight values: the running count reaches 8·1/2 = 4
		// after the value 1.
		{"halves", []float32{1, 1, 1, 1, 2, 3, 4, 5}, 2, []float32{1}},
		// Four bins: counts 4 ≥ 2 after 1, 5 ≥ 4 after 2, 6 ≥ 6 after 3.
		{"quarters", []float32{1, 1, 1, 1, 2, 3, 4, 5}, 4, []float32{1, 2, 3}},
		// Three bins of nine values with a heavy value: no cut after 1
		// (count 1·3 < 9), one after 2 (6·3 ≥ 1·9), one after 3
		// (8·3 ≥ 2·9), and then the bins are all placed.
		{"heavy value", []float32{1, 2, 2, 2, 2, 2, 3, 3, 4}, 3, []float32{2, 3}},
		{"constant", []float32{7, 7, 7}, 4, nil},
	} {
		if got := quantileCuts(c.sorted, c.bins); !slices.Equal(got, c.want) {
			t.Errorf("%s: cuts %v, want %v", c.name, got, c.want)
		}
	}
}

// sixRows is a tiny data set of 6 rows and 2 features with given λ and w:
//
//	row  x₀ x₁   λ    w
//	 0   1  2    1   ½
//	 1   2  1    1   ½
//	 2   3  2    1   1
//	 3   4  1   −1   1
//	 4   5  2   −1   ½
//	 5   6  1   −1   ½
//
// so G = 0 and H = 4 at the root. Each value is its own bin. With L2 = 0
// the gain ½(G_L²/H_L + G_R²/H_R − G²/H) of the splits x₀ ≤ 1 … 5 is
// ½(1/½ + 1/3.5) = 8/7, ½(4/1 + 4/3) = 8/3, ½(9/2 + 9/2) = 9/2, 8/3,
// 8/7, and of x₁ ≤ 1 (rows 1, 3, 5 left: G_L = −1, H_L = 2) ½(1/2 + 1/2)
// = 1/2. The best split is x₀ ≤ 3, gain 9/2, with leaf values (Newton
// steps) 3/2 and −3/2.
func sixRows(t *testing.T, opt Options) (*grower, []float64, []float64) {
	t.Helper()
	q := Queries{D: 2}
	if err := q.Add([]float32{1, 2, 2, 1, 3, 2, 4, 1, 5, 2, 6, 1}, []uint8{0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	opt = opt.withDefaults()
	if err := opt.Validate(); err != nil {
		t.Fatal(err)
	}
	b := newBinner(&q, opt.Bins, opt.BinSample, opt.Seed)
	if !slices.Equal(b.cuts[0], []float32{1, 2, 3, 4, 5}) || !slices.Equal(b.cuts[1], []float32{1}) {
		t.Fatalf("cuts %v", b.cuts)
	}
	lam := []float64{1, 1, 1, -1, -1, -1}
	w := []float64{0.5, 0.5, 1, 1, 0.5, 0.5}
	return newGrower(opt, b.apply(&q), b, q.Rows()), lam, w
}

func TestGrow_stump(t *testing.T) {
	gr, lam, w := sixRows(t, Options{MaxLeaves: 2, MinLeaf: 1, LearningRate: 1, Bins: 8})
	nodes, segs := gr.grow(lam, w)
	want := []node{
		// The root value is the mean output (3·3/2 − 3·3/2)/6 = 0.
		{feature: 0, threshold: 3, left: 1, right: 2, gain: 4.5, value: 0},
		{feature: -1, value: 1.5},
		{feature: -1, value: -1.5},
	}
	if !slices.Equal(nodes, want) {
		t.Fatalf("nodes %+v, want %+v", nodes, want)
	}
	if want := []segment{{1, 0, 3}, {2, 3, 6}}; !slices.Equal(segs, want) {
		t.Errorf("segments %v, want %v", segs, want)
	}
	if !slices.Equal(gr.rows, []int32{0, 1, 2, 3, 4, 5}) {
		t.Errorf("rows %v", gr.rows)
	}
}

// TestGrow_l2 repeats the stump with L2 = 1 and η = ½: the gains become
// ½(G_L²/(H_L+1) + G_R²/(H_R+1) − 0): x₀ ≤ 2 gives ½(4/2 + 4/4) = 3/2,
// x₀ ≤ 3 gives ½(9/3 + 9/3) = 3, x₁ ≤ 1 gives ½(1/3 + 1/3) = 1/3; the
// leaves are ½·3/(2+1) = ½ and ½·(−3)/(2+1) = −½.
func TestGrow_l2(t *testing.T) {
	gr, lam, w := sixRows(t, Options{MaxLeaves: 2, MinLeaf: 1, LearningRate: 0.5, L2: 1, Bins: 8})
	nodes, _ := gr.grow(lam, w)
	want := []node{
		{feature: 0, threshold: 3, left: 1, right: 2, gain: 3, value: 0},
		{feature: -1, value: 0.5},
		{feature: -1, value: -0.5},
	}
	if !slices.Equal(nodes, want) {
		t.Fatalf("nodes %+v, want %+v", nodes, want)
	}
}

// TestGrow_threeLeaves grows one more leaf. After x₀ ≤ 3 the left leaf
// (rows 0–2, G = 3, H = 2) can split x₀ ≤ 1: ½(1/½ + 4/1.5 − 9/2) = 1/12,
// x₀ ≤ 2: ½(4/1 + 1/1 − 9/2) = 1/4, or x₁ ≤ 1 (row 1 left): 1/12; the
// right leaf (rows 3–5, G = −3, H = 2) splits x₀ ≤ 4: ½(1/1 + 4/1 − 9/2)
// = 1/4, x₀ ≤ 5: 1/12, or x₁ ≤ 1 (rows 3, 5 left: G_L = −2, H_L = 3/2):
// 1/12. The equal best gains 1/4 go to the leaf listed first, the left
// one: leaves (rows 0–1) 2/1 = 2, (row 2) 1/1 = 1, (rows 3–5) −3/2. The
// internal values are the row-weighted means (2·2 + 1)/3 = 5/3 and
// (3·5/3 − 3·3/2)/6 = 1/12.
func TestGrow_threeLeaves(t *testing.T) {
	gr, lam, w := sixRows(t, Options{MaxLeaves: 3, MinLeaf: 1, LearningRate: 1, Bins: 8})
	nodes, segs := gr.grow(lam, w)
	if len(nodes) != 5 {
		t.Fatalf("nodes %+v, want 5", nodes)
	}
	want := []node{
		{feature: 0, threshold: 3, left: 1, right: 2, gain: 4.5},
		{feature: 0, threshold: 2, left: 3, right: 4, gain: 0.25},
		{feature: -1, value: -1.5},
		{feature: -1, value: 2},
		{feature: -1, value: 1},
	}
	for i := range want {
		g := nodes[i]
		g.value = want[i].value // compared below
		if g != want[i] {
			t.Errorf("node %d = %+v, want %+v", i, nodes[i], want[i])
		}
	}
	for i, v := range []float64{1.0 / 12, 5.0 / 3, -1.5, 2, 1} {
		if math.Abs(nodes[i].value-v) > 1e-15 {
			t.Errorf("node %d value %v, want %v", i, nodes[i].value, v)
		}
	}
	if want := []segment{{3, 0, 2}, {2, 3, 6}, {4, 2, 3}}; !slices.Equal(segs, want) {
		t.Errorf("segments %v, want %v", segs, want)
	}
}

// TestGrow_limits: MinLeaf 3 leaves x₀ ≤ 3 and x₁ ≤ 1 as the only splits
// of the root (x₀ ≤ 3 wins, 9/2 against 1/2) and none below it; MinLeaf 4
// allows no split, and the lone leaf is the Newton step 0/4 = 0; MaxDepth
// 1 stops at the stump however many leaves are allowed.
func TestGrow_limits(t *testing.T) {
	for _, c := range []struct {
		name  string
		opt   Options
		nodes int
	}{
		{"min leaf 3", Options{MaxLeaves: 8, MinLeaf: 3, LearningRate: 1, Bins: 8}, 3},
		{"min leaf 4", Options{MaxLeaves: 8, MinLeaf: 4, LearningRate: 1, Bins: 8}, 1},
		{"depth 1", Options{MaxLeaves: 8, MinLeaf: 1, MaxDepth: 1, LearningRate: 1, Bins: 8}, 3},
	} {
		gr, lam, w := sixRows(t, c.opt)
		nodes, _ := gr.grow(lam, w)
		if len(nodes) != c.nodes {
			t.Errorf("%s: nodes %+v, want %d", c.name, nodes, c.nodes)
			continue
		}
		if c.nodes == 3 && (nodes[0].threshold != 3 || nodes[0].gain != 4.5) {
			t.Errorf("%s: root %+v, want x₀ ≤ 3 with gain 4.5", c.name, nodes[0])
		}
		if c.nodes == 1 && nodes[0].value != 0 {
			t.Errorf("%s: leaf %+v, want value 0", c.name, nodes[0])
		}
	}
}

// TestBuild_chunks checks that the histogram of many rows summed in
// parallel pieces equals the one summed in a single pass, to rounding.
func TestBuild_chunks(t *testing.T) {
	q := xorQueries(t, 3, 400, 100, 3) // 40,000 rows: two pieces or more
	b := newBinner(&q, 16, DefaultBinSample, 1)
	gr := newGrower(Options{}.withDefaults(), b.apply(&q), b, q.Rows())
	lam, w := make([]float64, q.Rows()), make([]float64, q.Rows())
	for r := range lam {
		lam[r] = float64(r%7) - 3
		w[r] = float64(r%5) / 4
	}
	rows := make([]int32, q.Rows())
	for i := range rows {
		rows[i] = int32(i)
	}
	got, want := make([]histBin, gr.size), make([]histBin, gr.size)
	gr.build(got, rows, lam, w)
	gr.accumulate(want, rows, lam, w)
	for i := range got {
		if got[i].n != want[i].n || math.Abs(got[i].g-want[i].g) > 1e-9 || math.Abs(got[i].h-want[i].h) > 1e-9 {
			t.Fatalf("bin %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
