package ltr

import (
	"context"
	"math"
	"testing"
)

// threeLeafModel is the tree of TestGrow_threeLeaves as a model.
func threeLeafModel(t *testing.T) *Model {
	t.Helper()
	gr, lam, w := sixRows(t, Options{MaxLeaves: 3, MinLeaf: 1, LearningRate: 1, Bins: 8})
	nodes, _ := gr.grow(lam, w)
	return &Model{d: 2, roots: []int32{0}, nodes: nodes}
}

// TestModel_Explain_byHand: row (3, 2) goes x₀ ≤ 3 (root, value 1/12) to
// x₀ ≤ 2 (value 5/3), then right to the leaf of row 2 (value 1): the
// bias is 1/12, x₀ gets (5/3 − 1/12) + (1 − 5/3) = 11/12 and x₁ nothing.
// Row (5, 1) goes right from the root to the leaf −3/2: x₀ gets
// −3/2 − 1/12 = −19/12.
func TestModel_Explain_byHand(t *testing.T) {
	m := threeLeafModel(t)
	for _, c := range []struct {
		x           []float32
		score, bias float64
		contrib     [2]float64
	}{
		{[]float32{3, 2}, 1, 1.0 / 12, [2]float64{11.0 / 12, 0}},
		{[]float32{5, 1}, -1.5, 1.0 / 12, [2]float64{-19.0 / 12, 0}},
		{[]float32{0, 9}, 2, 1.0 / 12, [2]float64{23.0 / 12, 0}},
	} {
		if got := m.Score(c.x); got != c.score {
			t.Errorf("Score(%v) = %v, want %v", c.x, got, c.score)
		}
		bias, contrib := m.Explain(c.x)
		if math.Abs(bias-c.bias) > 1e-15 || math.Abs(contrib[0]-c.contrib[0]) > 1e-15 || contrib[1] != c.contrib[1] {
			t.Errorf("Explain(%v) = %v, %v, want %v, %v", c.x, bias, contrib, c.bias, c.contrib)
		}
	}
	// Both splits (gains 9/2 and 1/4) are on x₀: all the gain, 2 splits.
	imp := m.Importance()
	if math.Abs(imp.Gain[0]-1) > 1e-15 || imp.Gain[1] != 0 || imp.Splits[0] != 2 || imp.Splits[1] != 0 {
		t.Errorf("importance %+v, want all gain and 2 splits on x₀", imp)
	}
}

func TestModel_Explain_sums(t *testing.T) {
	train := xorQueries(t, 1, 100, 30, 5)
	m, _, err := Train(context.Background(), train, Queries{}, Options{Trees: 40, MinLeaf: 5})
	if err != nil {
		t.Fatal(err)
	}
	valid := xorQueries(t, 2, 20, 30, 5)
	for r := range valid.Rows() {
		x := valid.X[r*5 : (r+1)*5]
		bias, contrib := m.Explain(x)
		sum := bias
		for _, c := range contrib {
			sum += c
		}
		if s := m.Score(x); math.Abs(sum-s) > 1e-9 {
			t.Fatalf("row %d: bias %v + contributions %v = %v, score %v", r, bias, contrib, sum, s)
		}
	}
	imp := m.Importance()
	total, splits := 0.0, 0
	for f, g := range imp.Gain {
		total += g
		splits += imp.Splits[f]
	}
	if math.Abs(total-1) > 1e-12 || splits == 0 {
		t.Errorf("importance %+v: gains sum to %v, want 1", imp, total)
	}
}

func TestModel_ScoreBatch(t *testing.T) {
	q := xorQueries(t, 1, 60, 20, 3)
	m, _, err := Train(context.Background(), q, Queries{}, Options{Trees: 10, MinLeaf: 5})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, q.Rows())
	m.ScoreBatch(q.X, out)
	for r, s := range out {
		if want := m.Score(q.X[r*3 : (r+1)*3]); s != want {
			t.Fatalf("row %d: batch %v, Score %v", r, s, want)
		}
	}
	x := q.X[:3]
	if allocs := testing.AllocsPerRun(100, func() { m.Score(x) }); allocs != 0 {
		t.Errorf("Score allocates %v times", allocs)
	}
	defer func() {
		if recover() == nil {
			t.Error("ScoreBatch with a short output did not panic")
		}
	}()
	m.ScoreBatch(q.X, out[:1])
}

func TestQueries_Validate(t *testing.T) {
	for _, c := range []struct {
		name string
		q    Queries
	}{
		{"no features", Queries{}},
		{"short matrix", Queries{D: 2, X: []float32{1}, Offsets: []int{0, 1}, Labels: []uint8{0}}},
		{"first offset", Queries{D: 1, X: []float32{1, 2}, Offsets: []int{1, 2}, Labels: []uint8{0, 1}}},
		{"decreasing", Queries{D: 1, X: []float32{1, 2}, Offsets: []int{0, 2, 1, 2}, Labels: []uint8{0, 1}}},
		{"last offset", Queries{D: 1, X: []float32{1, 2}, Offsets: []int{0, 1}, Labels: []uint8{0, 1}}},
		{"no offsets", Queries{D: 1, X: []float32{1}, Labels: []uint8{0}}},
		{"label", Queries{D: 1, X: []float32{1, 2}, Offsets: []int{0, 2}, Labels: []uint8{0, 2}}},
		{"nan", Queries{D: 1, X: []float32{1, float32(math.NaN())}, Offsets: []int{0, 2}, Labels: []uint8{0, 1}}},
		{"inf", Queries{D: 1, X: []float32{float32(math.Inf(1)), 1}, Offsets: []int{0, 2}, Labels: []uint8{0, 1}}},
	} {
		if err := c.q.Validate(); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	q := Queries{D: 2}
	if err := q.Add([]float32{1, 2, 3}, []uint8{0, 1}); err == nil {
		t.Error("Add of 3 values for 2 rows of 2 features: no error")
	}
	for _, x := range [][]float32{{1, 2, 3, 4}, {}, {5, 6}} {
		if err := q.Add(x, make([]uint8, len(x)/2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Validate(); err != nil || q.Len() != 3 || q.Rows() != 3 {
		t.Errorf("after three Adds: %v, %d queries, %d rows, want 3 and 3", err, q.Len(), q.Rows())
	}
	if lo, hi := q.Query(2); lo != 2 || hi != 3 {
		t.Errorf("query 2 = rows [%d, %d), want [2, 3)", lo, hi)
	}
}

func TestOptions_Validate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for _, o := range []Options{
		{Trees: -1}, {LearningRate: -0.1}, {LearningRate: math.Inf(1)}, {MaxLeaves: 1}, {MaxDepth: -1},
		{MinLeaf: -1}, {Bins: 1}, {Bins: 257}, {Sigma: math.NaN()}, {L2: -1}, {Measure: 2},
		{K: 5}, {Measure: NDCG, K: -1}, {Patience: -1}, {BinSample: -1},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
