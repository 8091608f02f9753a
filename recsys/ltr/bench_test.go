package ltr

import (
	"context"
	"math/rand/v2"
	"testing"
)

// benchQueries generates nq queries of n candidates with d features: the
// relevance depends on an interaction of the first two features and on a
// linear part of the next four, the rest are noise.
func benchQueries(tb testing.TB, seed uint64, nq, n, d int) Queries {
	rng := rand.New(rand.NewPCG(seed, 2))
	return genQueries(tb, nq, n, d, func(row []float32) bool {
		for f := range row {
			row[f] = float32(rng.NormFloat64())
		}
		z := float64(row[0]*row[1]) + 0.5*float64(row[2]+row[3]-row[4]+row[5]) + rng.NormFloat64()
		return z > 2.5
	})
}

// BenchmarkTrain fits 100 trees (default options otherwise) to 2,000
// queries of 200 candidates and 20 features, 400,000 rows, without
// validation.
func BenchmarkTrain(b *testing.B) {
	q := benchQueries(b, 1, 2000, 200, 20)
	opt := Options{Trees: 100}
	b.ResetTimer()
	for b.Loop() {
		m, _, err := Train(context.Background(), q, Queries{}, opt)
		if err != nil {
			b.Fatal(err)
		}
		if m.Trees() != opt.Trees {
			b.Fatalf("%d trees", m.Trees())
		}
	}
}

// BenchmarkScore scores one row of a model of 100 trees of 31 leaves.
func BenchmarkScore(b *testing.B) {
	q := benchQueries(b, 1, 200, 200, 20)
	m, _, err := Train(context.Background(), q, Queries{}, Options{Trees: 100})
	if err != nil {
		b.Fatal(err)
	}
	x := q.X[:20]
	b.ResetTimer()
	for b.Loop() {
		m.Score(x)
	}
}
