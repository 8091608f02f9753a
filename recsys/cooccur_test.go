package recsys

import (
	"context"
	"testing"
)

// TestCoCounter_gram: every entry of the Gram matrix of an item set is the
// brute-force count |O⁺l ∩ O⁺m| (c(l) on the diagonal) whether both items,
// one or neither is among the popular ones, and the scratch marks are left
// clear.
func TestCoCounter_gram(t *testing.T) {
	x, d := randomMatrix(t, 31, 150, 40, 0.25)
	for _, p := range []int{0, 1, 7, 40, 100} {
		co, err := newCoCounter(context.Background(), x, p)
		if err != nil {
			t.Fatal(err)
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
		mark := make([]bool, x.Users())
		co.gram(items, g, mark)
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
		for u, m := range mark {
			if m {
				t.Fatalf("P=%d: user %d left marked", p, u)
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
