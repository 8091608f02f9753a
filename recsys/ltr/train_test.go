package ltr

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/recsys-engine/recsys/recsys/metrics"
)

// bestLinear is the best validation measure of the linear scorers
// cos θ·x₀ + sin θ·x₁ over θ in steps of 5°: an upper bound, up to the
// grid, of what a linear ranker on the two features achieves.
func bestLinear(q Queries) float64 {
	best := 0.0
	for deg := 0; deg < 360; deg += 5 {
		c, s := math.Cos(float64(deg)*math.Pi/180), math.Sin(float64(deg)*math.Pi/180)
		z := meanMeasure(q, func(x []float32) float64 { return c*float64(x[0]) + s*float64(x[1]) }, 0, ADG)
		best = max(best, z)
	}
	return best
}

// checkReport checks a report against the model it came with: the kept
// trees are the first best validation measure, and the model's scores
// give exactly the reported training and validation measures.
func checkReport(t *testing.T, m *Model, rep Report, train, valid Queries, opt Options) {
	t.Helper()
	if len(rep.Train) != rep.Fitted+1 || len(rep.Valid) != rep.Fitted+1 {
		t.Fatalf("%d train and %d validation measures for %d trees fitted", len(rep.Train), len(rep.Valid), rep.Fitted)
	}
	best := 0
	for i, v := range rep.Valid {
		if v > rep.Valid[best] {
			best = i
		}
	}
	if rep.Trees != best || m.Trees() != best {
		t.Errorf("kept %d trees (model %d), want the first best %d of %v", rep.Trees, m.Trees(), best, rep.Valid)
	}
	switch rep.Stop {
	case StopPatience:
		if rep.Fitted-best != opt.Patience {
			t.Errorf("stopped by patience %d after %d trees, best %d", opt.Patience, rep.Fitted, best)
		}
	case StopTrees:
		if rep.Fitted != opt.Trees {
			t.Errorf("stopped at %d trees of %d", rep.Fitted, opt.Trees)
		}
	}
	if got := meanMeasure(valid, m.Score, opt.K, opt.Measure); got != rep.Valid[best] {
		t.Errorf("model's validation measure %v, report %v", got, rep.Valid[best])
	}
	if got := meanMeasure(train, m.Score, opt.K, opt.Measure); got != rep.Train[best] {
		t.Errorf("model's training measure %v, report %v", got, rep.Train[best])
	}
}

func TestTrain_xor(t *testing.T) {
	train := xorQueries(t, 1, 300, 40, 4)
	valid := xorQueries(t, 2, 200, 40, 4)
	opt := Options{Trees: 150, MinLeaf: 10, Patience: 20}
	m, rep, err := Train(context.Background(), train, valid, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, m, rep, train, valid, opt.withDefaults())
	got := rep.Valid[rep.Trees]
	oracle := meanMeasure(valid, func(x []float32) float64 { return float64(x[0]) * float64(x[1]) }, 0, ADG)
	linear := bestLinear(valid)
	random := rep.Valid[0] // every score 0: candidates in index order
	t.Logf("validation ADG: model %.4f (%d trees, %s), x₀·x₁ %.4f, best linear %.4f, index order %.4f",
		got, rep.Trees, rep.Stop, oracle, linear, random)
	if got < oracle-0.005 || got < linear+0.1 || got < random+0.3 {
		t.Errorf("validation ADG %.4f, want within 0.005 of the ranking by x₀·x₁ (%.4f), 0.1 above the best linear scorer's %.4f and 0.3 above index order's %.4f",
			got, oracle, linear, random)
	}
	imp := m.Importance()
	if imp.Gain[0]+imp.Gain[1] < 0.8 {
		t.Errorf("importance %v: want most gain on the features x₀, x₁ of the relevance", imp.Gain)
	}
}

func TestTrain_ndcg(t *testing.T) {
	train := xorQueries(t, 1, 200, 40, 3)
	valid := xorQueries(t, 2, 100, 40, 3)
	opt := Options{Trees: 60, MinLeaf: 10, Patience: 20, Measure: NDCG, K: 10}
	m, rep, err := Train(context.Background(), train, valid, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, m, rep, train, valid, opt.withDefaults())
	if got := rep.Valid[rep.Trees]; got < rep.Valid[0]+0.2 {
		t.Errorf("validation NDCG@10 %.4f, want 0.2 above index order's %.4f", got, rep.Valid[0])
	}
}

// TestTrain_earlyStopping overfits a small training set with large steps
// and single-row leaves, so that the validation measure peaks and the
// patience stops training well before the limit of trees.
func TestTrain_earlyStopping(t *testing.T) {
	train := xorQueries(t, 5, 20, 30, 6)
	valid := xorQueries(t, 6, 200, 30, 6)
	opt := Options{Trees: 400, LearningRate: 0.5, MinLeaf: 1, Patience: 10}
	m, rep, err := Train(context.Background(), train, valid, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kept %d of %d trees, stop %s, validation %v", rep.Trees, rep.Fitted, rep.Stop, rep.Valid)
	if rep.Stop != StopPatience {
		t.Fatalf("stop %q, want %q", rep.Stop, StopPatience)
	}
	checkReport(t, m, rep, train, valid, opt.withDefaults())
	// The training set is ranked perfectly long before the end: its ADG is
	// that of every query's relevant candidates at the top, in index order.
	ideal, n := 0.0, 0
	for i := range train.Len() {
		lo, hi := train.Query(i)
		var ranks []int
		for _, l := range train.Labels[lo:hi] {
			if l == 1 {
				ranks = append(ranks, len(ranks))
			}
		}
		if len(ranks) > 0 {
			ideal += metrics.ADG(ranks)
			n++
		}
	}
	if ideal /= float64(n); rep.Train[rep.Fitted] != ideal {
		t.Errorf("final training ADG %v, want the perfect ranking's %v", rep.Train[rep.Fitted], ideal)
	}
}

func TestTrain_noValidation(t *testing.T) {
	train := xorQueries(t, 1, 50, 20, 2)
	opt := Options{Trees: 7, MinLeaf: 5}
	m, rep, err := Train(context.Background(), train, Queries{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if m.Trees() != 7 || rep.Trees != 7 || rep.Fitted != 7 || rep.Stop != StopTrees || rep.Valid != nil || len(rep.Train) != 8 {
		t.Errorf("model of %d trees, report %+v, want all 7 trees and no validation", m.Trees(), rep)
	}
}

// TestTrain_noSplit: with labels that no feature separates (every
// candidate of a query relevant, or none), there are no pairs, no
// gradient and no split.
func TestTrain_noSplit(t *testing.T) {
	q := Queries{D: 1}
	for i := range 10 {
		l := uint8(i % 2)
		if err := q.Add([]float32{1, 2, 3}, []uint8{l, l, l}); err != nil {
			t.Fatal(err)
		}
	}
	m, rep, err := Train(context.Background(), q, Queries{}, Options{MinLeaf: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Trees() != 0 || rep.Stop != StopNoSplit || rep.Fitted != 0 {
		t.Errorf("model of %d trees, report %+v, want no tree and stop %q", m.Trees(), rep, StopNoSplit)
	}
	// The queries with a relevant candidate have three, at ranks 0, 1, 2:
	// ADG (1 + 1/log2(3) + 1/2)/3.
	if want := (1 + 1/math.Log2(3) + 0.5) / 3; math.Abs(rep.Train[0]-want) > 1e-15 {
		t.Errorf("training ADG %v, want %v", rep.Train, want)
	}
}

func TestTrain_deterministic(t *testing.T) {
	train := xorQueries(t, 1, 200, 30, 3)
	valid := xorQueries(t, 2, 50, 30, 3)
	opt := Options{Trees: 20, MinLeaf: 5, BinSample: 1000, Seed: 9}
	var enc [2][]byte
	for i := range enc {
		m, _, err := Train(context.Background(), train, valid, opt)
		if err != nil {
			t.Fatal(err)
		}
		if enc[i], err = m.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(enc[0], enc[1]) {
		t.Error("two runs with the same data and seed gave different models")
	}
}

func TestTrain_cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, _, err := Train(ctx, xorQueries(t, 1, 10, 10, 2), Queries{}, Options{})
	if !errors.Is(err, context.Canceled) || m != nil {
		t.Errorf("Train after cancel = %v, %v, want context.Canceled and no model", m, err)
	}
}

func TestTrain_badInput(t *testing.T) {
	good := xorQueries(t, 1, 3, 4, 2)
	other := xorQueries(t, 1, 3, 4, 3)
	for _, c := range []struct {
		name         string
		train, valid Queries
		opt          Options
	}{
		{"no rows", Queries{D: 2}, Queries{}, Options{}},
		{"bad train", Queries{D: 2, X: []float32{1}, Offsets: []int{0, 1}, Labels: []uint8{0}}, Queries{}, Options{}},
		{"valid features", good, other, Options{}},
		{"bad options", good, Queries{}, Options{Bins: 300}},
		{"bad valid", good, Queries{D: 2, X: []float32{1, 2}, Offsets: []int{0, 1}, Labels: []uint8{3}}, Options{}},
		{"no valid positive", good, Queries{D: 2, X: []float32{1, 2}, Offsets: []int{0, 1}, Labels: []uint8{0}}, Options{}},
	} {
		if _, _, err := Train(context.Background(), c.train, c.valid, c.opt); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
