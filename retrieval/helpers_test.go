package retrieval

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/internal/fixture"
)

// labelled is a synthetic labelled set (fixture.Labelled).
type labelled struct {
	X      [][]float64
	Labels []int
}

func synthetic(n, noise int, seed uint64) labelled {
	x, l := fixture.Labelled(n, noise, seed)
	return labelled{X: x, Labels: l}
}

// raceEnabled shrinks the slow tests under the race detector.
const raceEnabled = fixture.Race

func mustMetric(tb testing.TB, d, m int, seed uint64) *Metric {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	mean, scale := make([]float64, d), make([]float64, d)
	for i := range mean {
		mean[i] = rng.NormFloat64()
		scale[i] = 0.5 + rng.Float64()
	}
	met := Euclidean(mean, scale)
	met.Method = "test"
	met.L = randDense(rng, d, m)
	return met
}

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	a := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	return a
}

func randVectors(rng *rand.Rand, n, m int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, m)
		for j := range out[i] {
			out[i][j] = rng.NormFloat64()
		}
	}
	return out
}
