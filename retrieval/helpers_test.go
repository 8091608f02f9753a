package retrieval

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// synthetic is a labelled set of n items in three classes: two informative
// features (class means on a circle of radius 2, unit noise) followed by
// noise features drawn from N(0, 3²), which swamp Euclidean distance.
func synthetic(n, noise int, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 99))
	ds := &Dataset{Name: "synthetic", Classes: []string{"a", "b", "c"}}
	for i := 0; i < n; i++ {
		c := i % 3
		angle := 2 * math.Pi * float64(c) / 3
		x := []float64{2*math.Cos(angle) + 0.8*rng.NormFloat64(), 2*math.Sin(angle) + 0.8*rng.NormFloat64()}
		for j := 0; j < noise; j++ {
			x = append(x, 3*rng.NormFloat64())
		}
		ds.X = append(ds.X, x)
		ds.Labels = append(ds.Labels, c)
	}
	for j := 0; j < 2+noise; j++ {
		ds.Features = append(ds.Features, "f"+string(rune('0'+j)))
	}
	return ds
}

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
