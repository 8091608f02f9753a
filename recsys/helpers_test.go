package recsys

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"recsys/recsys/internal/synth"
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

// bruteKNN picks the k best j ≠ i with a positive similarity, in KNN order.
func bruteKNN(sim []float64, self, k int) []Neighbour {
	var all []Neighbour
	for j, s := range sim {
		if j != self && s > 0 {
			all = append(all, Neighbour{Index: uint32(j), Value: s})
		}
	}
	slices.SortFunc(all, func(a, b Neighbour) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return all[:min(k, len(all))]
}

func colCounts(d [][]bool) []int {
	c := make([]int, len(d[0]))
	for _, row := range d {
		for i, b := range row {
			if b {
				c[i]++
			}
		}
	}
	return c
}

func rowCounts(d [][]bool) []int {
	c := make([]int, len(d))
	for u, row := range d {
		for _, b := range row {
			if b {
				c[u]++
			}
		}
	}
	return c
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
