package recsys

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCoCounter_gram: every entry of the Gram matrix of an item set is the
// brute-force count |O⁺l ∩ O⁺m| (c(l) on the diagonal) whether both items,
// one or neither is among the popular ones, and the scratch marks are left
// clear.
func TestCoCounter_gram(t *testing.T) {
	x, d := randomMatrix(t, 31, 150, 40, 0.25)
	defer func(b int64) { coRareBudget = b }(coRareBudget)
	for _, c := range []struct {
		p      int
		budget int64
	}{{0, 1 << 20}, {1, 1 << 20}, {7, 1 << 20}, {7, 0}, {40, 1 << 20}, {100, 1 << 20}, {20, 0}} {
		p := c.p
		coRareBudget = c.budget
		co, err := newCoCounter(context.Background(), x, p)
		if err != nil {
			t.Fatal(err)
		}
		if withTable := p > 0 && p < x.Items() && c.budget > 0; (co.rp != nil) != withTable {
			t.Fatalf("P=%d, budget %d: rare × popular table %v, want %v", p, c.budget, co.rp != nil, withTable)
		}
		for a, i := range co.pop {
			if got, want := co.popcount(int32(a)), x.ItemCount(int(i)); got != want {
				t.Fatalf("P=%d: bitset of item %d holds %d users, want %d", p, i, got, want)
			}
			if a > 0 && x.ItemCount(int(co.pop[a-1])) < x.ItemCount(int(i)) {
				t.Fatalf("P=%d: popular items out of order at %d", p, a)
			}
		}
		items := make([]Neighbour, 0, 40)
		for i := 39; i >= 0; i -= 2 {
			items = append(items, Neighbour{Index: uint32(i)})
		}
		for i := 0; i < 40; i += 2 {
			items = append(items, Neighbour{Index: uint32(i)})
		}
		k := len(items)
		g := make([]float64, k*k)
		sc := newGramScratch(x.Users())
		for i := range g {
			g[i] = -1 // what an earlier set left
		}
		co.gram(items, g, sc)
		for q, l := range items {
			for r, m := range items {
				want := 0
				for u := range d {
					if d[u][l.Index] && d[u][m.Index] {
						want++
					}
				}
				if g[q*k+r] != float64(want) {
					t.Fatalf("P=%d: G(%d, %d) = %g, want %d", p, l.Index, m.Index, g[q*k+r], want)
				}
			}
		}
		for u, at := range sc.at {
			if at != 0 {
				t.Fatalf("P=%d: user %d left with a row", p, u)
			}
		}
		// The scratch serves the next set as a fresh one would.
		sub := items[5:17]
		g2 := make([]float64, len(sub)*len(sub))
		co.gram(sub, g2, sc)
		for q := range sub {
			for r := range sub {
				if g2[q*len(sub)+r] != g[(q+5)*k+r+5] {
					t.Fatalf("P=%d: the second set's G(%d, %d) = %g, want %g", p, q, r, g2[q*len(sub)+r], g[(q+5)*k+r+5])
				}
			}
		}
	}
}

// TestSLIM_Fit_fewPopular: the fit does not depend on how many items the
// pair counter precomputes (the counts are exact either way).
func TestSLIM_Fit_fewPopular(t *testing.T) {
	x := generated(t, 9, 300, 120, 20)
	fit := func() []byte {
		m := &ItemP{name: "slim"}
		if err := m.Fit(context.Background(), x, Params{K: 30, L1: 0.5, L2: 1}); err != nil {
			t.Fatal(err)
		}
		b, _ := m.MarshalBinary()
		return b
	}
	want := fit()
	defer func(p int) { slimPopularItems = p }(slimPopularItems)
	for _, p := range []int{0, 5, 60} {
		slimPopularItems = p
		if got := fit(); string(got) != string(want) {
			t.Fatalf("P=%d: the fit differs from P=all", p)
		}
	}
}

// gramByColumns is coCounter.gram as it was before the per-user bitsets:
// each pair counted from a column (the popular items' from the table), at
// the cost of the column's length. The benchmark's "before".
func gramByColumns(c *coCounter, items []Neighbour, g []float64, mark []bool) {
	k := len(items)
	x := c.x
	for q, e := range items {
		l := e.Index
		g[q*k+q] = float64(x.ItemCount(int(l)))
		sl := c.slot[l]
		marked := false
		for r := q + 1; r < k; r++ {
			m := items[r].Index
			sm := c.slot[m]
			var v int
			switch {
			case sl >= 0 && sm >= 0:
				v = int(c.pp[int(sl)*len(c.pop)+int(sm)])
			case sl >= 0:
				for _, u := range x.Col(int(m)) {
					if c.has(sl, u) {
						v++
					}
				}
			case sm >= 0:
				for _, u := range x.Col(int(l)) {
					if c.has(sm, u) {
						v++
					}
				}
			default:
				if !marked {
					for _, u := range x.Col(int(l)) {
						mark[u] = true
					}
					marked = true
				}
				for _, u := range x.Col(int(m)) {
					if mark[u] {
						v++
					}
				}
			}
			g[q*k+r], g[r*k+q] = float64(v), float64(v)
		}
		if marked {
			for _, u := range x.Col(int(l)) {
				mark[u] = false
			}
		}
	}
}

// scaleMatrix is `recsys scale`'s shape at m users: each user's count of
// distinct items drawn from a Pareto law of tail index 2 and mean perUser
// (at most a fifth of the catalogue), the items from a Zipf law of
// exponent 1 over n items in shuffled order.
func scaleMatrix(tb testing.TB, seed uint64, m, n int, perUser float64) *Matrix {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	cum := make([]float64, n)
	total := 0.0
	for r := range cum {
		total += 1 / float64(r+1)
		cum[r] = total
	}
	perm := rng.Perm(n)
	const a = 2.0
	xm := perUser * (a - 1) / a
	return drawnMatrix(tb, m, n, func() int { return max(1, min(int(xm/math.Pow(1-rng.Float64(), 1/a)), n/5)) }, func() int {
		r, _ := slices.BinarySearch(cum, rng.Float64()*total)
		return perm[min(r, n-1)]
	})
}

// BenchmarkCoCounterGram counts the Gram matrices of 300 items' cosine
// KNN(j) at k = 200 on a matrix of `recsys scale`'s shape (27,000 items,
// Pareto users with 143 items on average; 30,000 users, so 4.3M events),
// as fsSLIM and the sparse EASE load a column, by columns (before) and by
// users (gram); the two agree.
func BenchmarkCoCounterGram(b *testing.B) {
	x := scaleMatrix(b, 46, 30000, 27000, 143)
	ctx := context.Background()
	nb, err := ItemNeighbours(ctx, x, SimCosine, Params{K: 200})
	if err != nil {
		b.Fatal(err)
	}
	co, err := newCoCounter(ctx, x, slimPopularItems)
	if err != nil {
		b.Fatal(err)
	}
	var sets [][]Neighbour
	for j := 0; j < x.Items() && len(sets) < 300; j += 90 {
		if row := nb.Row(j); len(row) > 0 {
			sets = append(sets, row)
		}
	}
	g, want := make([]float64, 200*200), make([]float64, 200*200)
	mark, sc := make([]bool, x.Users()), newGramScratch(x.Users())
	for _, s := range sets[:20] {
		gramByColumns(co, s, want, mark)
		co.gram(s, g, sc)
		if !slices.Equal(g[:len(s)*len(s)], want[:len(s)*len(s)]) {
			b.Fatal("the two counts differ")
		}
	}
	b.Run("columns", func(b *testing.B) {
		for b.Loop() {
			for _, s := range sets {
				gramByColumns(co, s, g, mark)
			}
		}
	})
	b.Run("users", func(b *testing.B) {
		for b.Loop() {
			for _, s := range sets {
				co.gram(s, g, sc)
			}
		}
	})
}
