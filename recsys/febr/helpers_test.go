package febr

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"recsys/recsys"
	"recsys/recsys/internal/synth"
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

// bruteKNN picks the k best j ≠ i with a positive similarity, in KNN order.
func bruteKNN(sim []float64, self, k int) []recsys.Neighbour {
	var all []recsys.Neighbour
	for j, s := range sim {
		if j != self && s > 0 {
			all = append(all, recsys.Neighbour{Index: uint32(j), Value: s})
		}
	}
	slices.SortFunc(all, func(a, b recsys.Neighbour) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return all[:min(k, len(all))]
}

// bruteUserP scores a live history h with user-p: KNN(h) among the
// training users other than self by cosine (or Eq. 4.6), summing A(h, v)
// over the neighbours that hold i.
func bruteUserP(d [][]bool, h []bool, self, k int, kunn bool) []float64 {
	m, n := len(d), len(d[0])
	sim := make([]float64, m)
	for v := range m {
		if kunn {
			sim[v] = kunnUserSim(d, h, v)
			continue
		}
		co, ch, cv := 0, 0, 0
		for j := range n {
			if h[j] {
				ch++
			}
			if d[v][j] {
				cv++
			}
			if h[j] && d[v][j] {
				co++
			}
		}
		if co > 0 {
			sim[v] = float64(co) / math.Sqrt(float64(ch)*float64(cv))
		}
	}
	out := make([]float64, n)
	for _, e := range bruteKNN(sim, self, k) {
		for i := range n {
			if d[e.Index][i] {
				out[i] += e.Value
			}
		}
	}
	return out
}

// kunnItemSim is Eq. (4.5) computed directly: ~iᵀ W_U ~j / (‖i‖‖j‖).
func kunnItemSim(d [][]bool, i, j int) float64 {
	cu, ci := rowCounts(d), colCounts(d)
	if ci[i] == 0 || ci[j] == 0 {
		return 0
	}
	s := 0.0
	for v := range d {
		if d[v][i] && d[v][j] {
			s += 1 / math.Sqrt(float64(cu[v]))
		}
	}
	return s / math.Sqrt(float64(ci[i])*float64(ci[j]))
}

// kunnUserSim is Eq. (4.6) computed directly for a history h against
// training user v.
func kunnUserSim(d [][]bool, h []bool, v int) float64 {
	ci, cu := colCounts(d), rowCounts(d)
	ch := 0
	s := 0.0
	for j, b := range h {
		if b {
			ch++
			if d[v][j] {
				s += 1 / math.Sqrt(float64(ci[j]))
			}
		}
	}
	if ch == 0 || cu[v] == 0 {
		return 0
	}
	return s / math.Sqrt(float64(ch)*float64(cu[v]))
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

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
