package mf

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/internal/synth"
)

// synthetic is the Synthetic1 problem of seed 003 §5 at a size a test can
// afford: U* (m×r) and V* (n×r) with orthonormal columns, X̂(u,i) = 1 for
// the top tenth of user u's items by u*·v*ᵢ, plus noise random relevant
// items per user.
func synthetic(tb testing.TB, seed uint64, m, n, r, noise int) *recsys.Matrix {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	orth := func(rows int) *mat.Dense {
		a := mat.NewDense(rows, r, nil)
		for i := range rows {
			for j := range r {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		var qr mat.QR
		qr.Factorize(a)
		var q mat.Dense
		qr.QTo(&q)
		return mat.DenseCopyOf(q.Slice(0, rows, 0, r))
	}
	us, vs := orth(m), orth(n)
	var z mat.Dense
	z.Mul(us, vs.T())
	top := max(1, n/10)
	var pairs []recsys.Pair
	idx := make([]int, n)
	for u := range m {
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(z.At(u, b), z.At(u, a)) })
		for _, i := range idx[:top] {
			pairs = append(pairs, recsys.Pair{User: uint32(u), Item: uint32(i)})
		}
		for range noise {
			pairs = append(pairs, recsys.Pair{User: uint32(u), Item: uint32(rng.IntN(n))})
		}
	}
	x, err := recsys.NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// randomMatrix draws X with each entry 1 with probability p.
func randomMatrix(tb testing.TB, seed uint64, m, n int, p float64) *recsys.Matrix {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	var pairs []recsys.Pair
	for u := range m {
		for i := range n {
			if rng.Float64() < p {
				pairs = append(pairs, recsys.Pair{User: uint32(u), Item: uint32(i)})
			}
		}
	}
	x, err := recsys.NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// generated is a sparse matrix with popularity skew and clusters, for
// benchmarks.
func generated(tb testing.TB, seed uint64, m, n, perUser int) *recsys.Matrix {
	tb.Helper()
	var pairs []recsys.Pair
	synth.Clustered(seed, m, n, perUser, func(u, i uint32) { pairs = append(pairs, recsys.Pair{User: u, Item: i}) })
	x, err := recsys.NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// trainingAUC is the mean over users with relevant and irrelevant items of
// the fraction of (relevant, irrelevant) pairs the model orders correctly
// (ties count one half), scoring each user's own training row.
func trainingAUC(m recsys.Model, x *recsys.Matrix) float64 {
	scores := make([]float64, x.Items())
	sum, users := 0.0, 0
	for u := range x.Users() {
		row := x.Row(u)
		if len(row) == 0 || len(row) == x.Items() {
			continue
		}
		recsys.ScoreUser(m, u, row, scores)
		sum += auc(scores, row)
		users++
	}
	return sum / float64(users)
}

// auc is the AUC of scores with the sorted relevant items.
func auc(scores []float64, relevant []uint32) float64 {
	var pos, neg []float64
	for i, s := range scores {
		if contains(relevant, uint32(i)) {
			pos = append(pos, s)
		} else {
			neg = append(neg, s)
		}
	}
	good := 0.0
	for _, p := range pos {
		for _, q := range neg {
			switch {
			case p > q:
				good++
			case p == q:
				good += 0.5
			}
		}
	}
	return good / float64(len(pos)*len(neg))
}

func mustFit(tb testing.TB, name string, x *recsys.Matrix, p recsys.Params) recsys.Model {
	tb.Helper()
	m, err := recsys.New(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.Fit(context.Background(), x, p); err != nil {
		tb.Fatalf("fit %s: %v", name, err)
	}
	return m
}
