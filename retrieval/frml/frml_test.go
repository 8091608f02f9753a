package frml

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/rank"
)

// TestLossWeight_eq310: L̂_WARP(ns) = L_opt(⌊|X⁻q|/ns⌋) for the reciprocal
// loss, normalised by L_opt(|X⁻q|); with |X⁻q| = 4, L_opt(4) = 25/12.
func TestLossWeight_eq310(t *testing.T) {
	tr := newTrainer(Problem{X: mat.NewDense(6, 1, nil)}, Options{})
	for _, tc := range []struct {
		ns   int
		want float64
	}{{1, 1}, {2, 1.5 / (25.0 / 12)}, {3, 1 / (25.0 / 12)}, {4, 1 / (25.0 / 12)}} {
		if got := tr.lossWeight(4, tc.ns); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("L̂(%d) = %v, want %v", tc.ns, got, tc.want)
		}
	}
}

func TestBeta(t *testing.T) {
	for _, tc := range []struct {
		opt        Options
		nNeg, want int
	}{
		{Options{Kappa: 1}, 40, 40},
		{Options{Kappa: 0.1}, 40, 4},
		{Options{Kappa: 0.001}, 40, 1},
		{Options{Kappa: 1, AUC: true}, 40, 1},
	} {
		tr := &trainer{opt: tc.opt}
		if got := tr.beta(tc.nNeg); got != tc.want {
			t.Errorf("β(%+v, %d) = %d, want %d", tc.opt, tc.nNeg, got, tc.want)
		}
	}
}

// twoClasses: one informative feature, three noisy ones.
func twoClasses(n int, seed uint64) (*mat.Dense, *rank.Supervision) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, 4, nil)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		labels[i] = i % 2
		x.Set(i, 0, 2*float64(labels[i])-1+0.4*rng.NormFloat64())
		for j := 1; j < 4; j++ {
			x.Set(i, j, 1.5*rng.NormFloat64())
		}
	}
	sup, _ := rank.FromLabels(labels)
	return x, sup
}

// trainMAP is the leave-one-out MAP of the training items under L.
func trainMAP(x *mat.Dense, sup *rank.Supervision, l *mat.Dense) float64 {
	var y mat.Dense
	y.Mul(x, l)
	n, m := y.Dims()
	total := 0.0
	for q := 0; q < n; q++ {
		dist := make([]float64, n)
		for i := 0; i < n; i++ {
			for k := 0; k < m; k++ {
				t := y.At(q, k) - y.At(i, k)
				dist[i] += t * t
			}
		}
		var rel []bool
		for _, i := range rank.ByDistance(dist, q) {
			rel = append(rel, sup.IsRelevant(q, i))
		}
		total += rank.AveragePrecision(rel)
	}
	return total / float64(n)
}

func TestTrain_learnsAndIsReproducible(t *testing.T) {
	x, sup := twoClasses(80, 1)
	init := mat.NewDense(4, 2, []float64{0.3, 0, 0, 1, 1, 0, 0, 1})
	for _, auc := range []bool{false, true} {
		opt := Options{Rank: 2, AUC: auc, Iterations: 4000, Segment: 1000, Etas: []float64{0.01, 0.05}, Init: init, Seed: 5}
		val := func(l *mat.Dense) float64 { return trainMAP(x, sup, l) }
		a, err := Train(context.Background(), Problem{X: x, Sup: sup}, val, opt)
		if err != nil {
			t.Fatal(err)
		}
		before, after := trainMAP(x, sup, init), trainMAP(x, sup, a.L)
		t.Logf("auc=%v: MAP %.3f → %.3f, schedule %v, fallbacks %d", auc, before, after, a.Schedule, a.Fallbacks)
		if after < before+0.1 {
			t.Errorf("auc=%v: MAP %.3f → %.3f", auc, before, after)
		}
		b, err := Train(context.Background(), Problem{X: x, Sup: sup}, val, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a.L, b.L) || !slices.Equal(a.Schedule, b.Schedule) {
			t.Errorf("auc=%v: same seed, different result", auc)
		}
		// Replaying the schedule without validation gives the same factor.
		c, err := Train(context.Background(), Problem{X: x, Sup: sup}, nil, Options{Rank: 2, AUC: auc, Segment: 1000, Schedule: a.Schedule, Init: init, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a.L, c.L) {
			t.Errorf("auc=%v: replayed schedule differs", auc)
		}
	}
}

func TestTrain_cancelled(t *testing.T) {
	x, sup := twoClasses(20, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, Problem{X: x, Sup: sup}, nil, Options{Iterations: 100}); err == nil {
		t.Fatal("a cancelled context did not stop training")
	}
}
