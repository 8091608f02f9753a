package recsys

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/recsys-engine/recsys/recsys/internal/brute"
	"github.com/recsys-engine/recsys/recsys/internal/synth"
)

// randomMatrix draws X with each entry 1 with probability p, and returns
// it with its dense copy.
func randomMatrix(tb testing.TB, seed uint64, m, n int, p float64) (*Matrix, [][]bool) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	dense := make([][]bool, m)
	var pairs []Pair
	for u := range dense {
		dense[u] = make([]bool, n)
		for i := range dense[u] {
			if rng.Float64() < p {
				dense[u][i] = true
				pairs = append(pairs, Pair{User: uint32(u), Item: uint32(i)})
			}
		}
	}
	rng.Shuffle(len(pairs), func(a, b int) { pairs[a], pairs[b] = pairs[b], pairs[a] })
	x, err := NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x, dense
}

// generated is a larger sparse matrix with popularity skew for benchmarks.
func generated(tb testing.TB, seed uint64, m, n, perUser int) *Matrix {
	tb.Helper()
	var pairs []Pair
	synth.Clustered(seed, m, n, perUser, func(u, i uint32) { pairs = append(pairs, Pair{User: u, Item: i}) })
	x, err := NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// bruteKNN is brute.KNN as recsys neighbours: the k best j ≠ self with a
// positive similarity, in KNN order.
func bruteKNN(sim []float64, self, k int) []Neighbour {
	knn := brute.KNN(sim, self, k)
	out := make([]Neighbour, len(knn))
	for n, e := range knn {
		out[n] = Neighbour(e)
	}
	return out
}

func inList(l []Neighbour, j int) (float64, bool) {
	for _, e := range l {
		if int(e.Index) == j {
			return e.Value, true
		}
	}
	return 0, false
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func historyOf(d [][]bool, u int) []uint32 {
	var h []uint32
	for i, b := range d[u] {
		if b {
			h = append(h, uint32(i))
		}
	}
	return h
}
