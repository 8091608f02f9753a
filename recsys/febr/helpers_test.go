package febr

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/internal/brute"
	"github.com/recsys-engine/recsys/recsys/internal/synth"
)

// The helpers of package recsys's tests that FEBR's tests use, on
// recsys's exported types.

// randomMatrix draws X with each entry 1 with probability p, and returns
// it with its dense copy.
func randomMatrix(tb testing.TB, seed uint64, m, n int, p float64) (*recsys.Matrix, [][]bool) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	dense := make([][]bool, m)
	var pairs []recsys.Pair
	for u := range dense {
		dense[u] = make([]bool, n)
		for i := range dense[u] {
			if rng.Float64() < p {
				dense[u][i] = true
				pairs = append(pairs, recsys.Pair{User: uint32(u), Item: uint32(i)})
			}
		}
	}
	rng.Shuffle(len(pairs), func(a, b int) { pairs[a], pairs[b] = pairs[b], pairs[a] })
	x, err := recsys.NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x, dense
}

// generated is a larger sparse matrix with popularity skew (synth.Clustered).
func generated(tb testing.TB, seed uint64, m, n, perUser int) *recsys.Matrix {
	tb.Helper()
	return drawn(tb, m, n, func(add func(u, i uint32)) { synth.Clustered(seed, m, n, perUser, add) })
}

// drawn is the m × n matrix of the pairs draw adds.
func drawn(tb testing.TB, m, n int, draw func(add func(u, i uint32))) *recsys.Matrix {
	tb.Helper()
	var pairs []recsys.Pair
	draw(func(u, i uint32) { pairs = append(pairs, recsys.Pair{User: u, Item: i}) })
	x, err := recsys.NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// fitted is a model of the registry fitted on x with p.
func fitted(tb testing.TB, name string, x *recsys.Matrix, p recsys.Params) recsys.Model {
	tb.Helper()
	m, err := recsys.New(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.Fit(context.Background(), x, p); err != nil {
		tb.Fatal(err)
	}
	return m
}

// roundTrip encodes m (fitted as name) and loads the bytes: the loaded
// model is name, encodes to the same bytes and scores every user of x as m
// does. It returns the encoding and the loaded model.
func roundTrip(t *testing.T, name string, m recsys.Model, x *recsys.Matrix) ([]byte, recsys.Model) {
	t.Helper()
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := recsys.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Name() != name {
		t.Fatalf("loaded %q", back.Name())
	}
	if again, _ := back.MarshalBinary(); !slices.Equal(data, again) {
		t.Fatal("re-encoding changed the bytes")
	}
	a, b := make([]float64, x.Items()), make([]float64, x.Items())
	for u := range x.Users() {
		recsys.ScoreUser(m, u, x.Row(u), a)
		recsys.ScoreUser(back, u, x.Row(u), b)
		if !slices.Equal(a, b) {
			t.Fatalf("user %d: scores differ after the round trip", u)
		}
	}
	return data, back
}

// bruteKNN is brute.KNN as recsys neighbours: the k best j ≠ self with a
// positive similarity, in KNN order.
func bruteKNN(sim []float64, self, k int) []recsys.Neighbour {
	knn := brute.KNN(sim, self, k)
	out := make([]recsys.Neighbour, len(knn))
	for n, e := range knn {
		out[n] = recsys.Neighbour(e)
	}
	return out
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
