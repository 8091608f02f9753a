package recsys

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/recsys/blob"
	"github.com/recsys-engine/recsys/recsys/internal/brute"
)

func denseX(d [][]bool) *mat.Dense {
	x := mat.NewDense(len(d), len(d[0]), nil)
	for u, row := range d {
		for i, b := range row {
			if b {
				x.Set(u, i, 1)
			}
		}
	}
	return x
}

// checkLists compares neighbour lists with a brute-force computation
// entry by entry (indices and values must match exactly: both compute the
// same integer co-occurrence counts over the same norms).
func checkLists(t *testing.T, got *Neighbours, want func(r int) []Neighbour) {
	t.Helper()
	for r := 0; r < got.Rows(); r++ {
		g, w := got.Row(r), want(r)
		if len(g) != len(w) {
			t.Fatalf("row %d: %d neighbours, want %d", r, len(g), len(w))
		}
		for k := range g {
			if g[k] != w[k] {
				t.Fatalf("row %d entry %d: %+v, want %+v", r, k, g[k], w[k])
			}
		}
	}
}

// denseCosineKNN gives the brute-force neighbours of row i from the dense
// co-occurrence g and the counts c: the k best by cosine g_ij/√(c_i·c_j).
func denseCosineKNN(g *mat.Dense, c []int, k int) func(i int) []Neighbour {
	return func(i int) []Neighbour {
		sim := make([]float64, len(c))
		for j := range sim {
			if c[i] > 0 && c[j] > 0 {
				sim[j] = g.At(i, j) / math.Sqrt(float64(c[i])*float64(c[j]))
			}
		}
		return bruteKNN(sim, i, k)
	}
}

func TestItemCosineKNN_matchesDense(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		k    int
		p    float64
	}{{1, 3, 0.2}, {2, 5, 0.1}, {3, 100, 0.3}, {4, 1, 0.05}} {
		x, d := randomMatrix(t, tc.seed, 40, 30, tc.p)
		// Dense co-occurrence XᵀX with gonum: the brute force.
		var g mat.Dense
		xd := denseX(d)
		g.Mul(xd.T(), xd)
		c := brute.ColCounts(d)
		got, err := ItemCosineKNN(context.Background(), x, tc.k, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkLists(t, got, denseCosineKNN(&g, c, tc.k))
	}
}

func TestUserCosineKNN_matchesDense(t *testing.T) {
	x, d := randomMatrix(t, 5, 35, 25, 0.15)
	var g mat.Dense
	xd := denseX(d)
	g.Mul(xd, xd.T())
	c := brute.RowCounts(d)
	got, err := UserCosineKNN(context.Background(), x, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkLists(t, got, denseCosineKNN(&g, c, 4))
}

func TestItemKUNNKNN_matchesEq45(t *testing.T) {
	x, d := randomMatrix(t, 9, 30, 25, 0.2)
	got, err := ItemKUNNKNN(context.Background(), x, 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkLists(t, got, func(i int) []Neighbour {
		sim := make([]float64, len(d[0]))
		for j := range sim {
			sim[j] = brute.KUNNItemSim(d, i, j)
		}
		return bruteKNN(sim, i, 6)
	})
}

func TestNeighbours_Truncate_isPrefix(t *testing.T) {
	x, _ := randomMatrix(t, 3, 40, 30, 0.2)
	full, _ := ItemCosineKNN(context.Background(), x, 20, nil)
	small, _ := ItemCosineKNN(context.Background(), x, 4, nil)
	checkLists(t, full.Truncate(4), func(r int) []Neighbour { return small.Row(r) })
}

// A truncation is a view of the lists it was cut from; everything read
// through it (a further cut, Len, MaxRow, Reverse, Clone, the encoding)
// is what lists computed at that k give, and cutting to 0 leaves no entry.
func TestNeighbours_Truncate_view(t *testing.T) {
	x, _ := randomMatrix(t, 5, 60, 40, 0.25)
	full, _ := ItemCosineKNN(context.Background(), x, 20, nil)
	k3, _ := ItemCosineKNN(context.Background(), x, 3, nil)
	view := full.Truncate(8).Truncate(3)
	for r := 0; r < full.Rows(); r++ {
		if len(view.Row(r)) > 0 && &view.Row(r)[0] != &full.Row(r)[0] {
			t.Fatalf("the truncation copied row %d", r)
		}
	}
	if view.Len() != k3.Len() || view.MaxRow() != k3.MaxRow() || view.Truncate(10).Len() != k3.Len() {
		t.Fatalf("Len %d, MaxRow %d, a longer cut's Len %d; want %d, %d, %d", view.Len(), view.MaxRow(), view.Truncate(10).Len(), k3.Len(), k3.MaxRow(), k3.Len())
	}
	for _, got := range []*Neighbours{view.Reverse(x.Items()), view.Clone().Reverse(x.Items())} {
		want := k3.Reverse(x.Items())
		checkLists(t, got, func(r int) []Neighbour { return want.Row(r) })
	}
	if c := view.Clone(); len(c.ent) != k3.Len() {
		t.Fatalf("the clone of a cut holds %d entries, want %d", len(c.ent), k3.Len())
	}
	if encodedLists(view) != encodedLists(k3) {
		t.Fatal("a cut encodes unlike lists computed at its k")
	}
	if z := full.Truncate(0); z.Len() != 0 || z.MaxRow() != 0 {
		t.Fatalf("Truncate(0): %d entries", z.Len())
	}
}

func TestItemCosineKNN_cancelled(t *testing.T) {
	x, _ := randomMatrix(t, 3, 40, 30, 0.2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ItemCosineKNN(ctx, x, 4, nil); err == nil {
		t.Fatal("no error from a cancelled context")
	}
}

// The user side's two accumulations give the same KNN(u), in the same
// order and with the same similarities, as each other and as the brute
// force: for training users (self left out) at densities on either side of
// search's switch, cosine and KUNN, and for a live history with a repeat
// and an item the matrix does not know.
func TestUserSide_searchDenseEqualsSparse(t *testing.T) {
	for _, p := range []float64{0.05, 0.4} {
		x, d := randomMatrix(t, 11, 60, 30, p)
		for _, kunn := range []bool{false, true} {
			s := newUserSide(x, 0, kunn)
			sc := s.pool.Get().(*userScratch)
			same := func(what string, k int, self int, h []uint32, want []Neighbour) {
				t.Helper()
				sparse := slices.Clone(s.searchMode(self, h, k, sc, false))
				dense := slices.Clone(s.searchMode(self, h, k, sc, true))
				if !slices.Equal(sparse, dense) {
					t.Fatalf("p %g kunn %v %s: sparse %v, dense %v", p, kunn, what, sparse, dense)
				}
				if want != nil && !slices.EqualFunc(dense, want, func(a, b Neighbour) bool {
					return a.Index == b.Index && closeTo(a.Value, b.Value, 1e-12)
				}) {
					t.Fatalf("p %g kunn %v %s: %v, brute force %v", p, kunn, what, dense, want)
				}
				if slices.ContainsFunc(sc.co.acc, func(a float64) bool { return a != 0 }) {
					t.Fatalf("p %g kunn %v %s: the scratch sums are not cleared", p, kunn, what)
				}
				if s.pop != nil {
					if got := s.pop.search(x, self, h, k, sc.cnt, sc.mask, &sc.best); !slices.Equal(got, sparse) {
						t.Fatalf("p %g %s: by popular bits %v, sparse %v", p, what, got, sparse)
					}
				}
			}
			for u := range x.Users() {
				for _, k := range []int{1, 7, 100} {
					same(fmt.Sprintf("user %d k %d", u, k), k, u, x.Row(u), bruteKNNOfUser(d, u, k, kunn))
				}
			}
			h := append(slices.Clone(x.Row(3)), 99)
			h = slices.Insert(h, 1, h[0])
			same("live history", 10, -1, h, nil)
			if (s.pop != nil) == kunn {
				t.Fatalf("p %g kunn %v: popular bits %v", p, kunn, s.pop != nil)
			}
		}
	}
}

// On a matrix of `recsys scale`'s shape, where only the head of the items
// is held as bits (two words of them), the popcount search gives the same
// KNN(u), values included, as the accumulation; the counts are left zero.
func TestPopularBits_searchEqualsAccumulation(t *testing.T) {
	x := scaleMatrix(t, 5, 3000, 500, 30)
	s := newUserSide(x, 0, false)
	if s.pop == nil || s.pop.words != 2 {
		t.Fatalf("popular bits %+v: want two words on this matrix", s.pop)
	}
	// The most popular items are held, up to the cap: here more items
	// qualify than the cap, so the cut falls inside the qualifying ones.
	qualify, leastHeld, mostLeft := 0, x.Users(), 0
	for j := range x.Items() {
		if x.ItemCount(j)*popularBitsShare >= x.Users() {
			qualify++
		}
		if s.pop.bit[j] >= 0 {
			leastHeld = min(leastHeld, x.ItemCount(j))
		} else {
			mostLeft = max(mostLeft, x.ItemCount(j))
		}
	}
	if qualify <= popularBitsMax || leastHeld < mostLeft {
		t.Fatalf("%d items qualify; the least popular held has %d users, the most popular left %d", qualify, leastHeld, mostLeft)
	}
	sc := s.pool.Get().(*userScratch)
	check := func(self int, h []uint32, k int) {
		t.Helper()
		want := slices.Clone(s.searchMode(self, h, k, sc, true))
		got := s.pop.search(x, self, h, k, sc.cnt, sc.mask, &sc.best)
		if !slices.Equal(got, want) {
			t.Fatalf("user %d k %d: by popular bits %d neighbours %v..., accumulated %d %v...", self, k, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
		}
		if slices.ContainsFunc(sc.cnt, func(c uint32) bool { return c != 0 }) {
			t.Fatalf("user %d k %d: counts not cleared", self, k)
		}
	}
	for u := 0; u < x.Users(); u += 7 {
		for _, k := range []int{0, 1, 50, x.Users()} {
			check(u, x.Row(u), k)
		}
	}
	h := append(slices.Clone(x.Row(10)), uint32(x.Items()+3))
	h = slices.Insert(h, 1, h[0])
	check(-1, h, 40)
	// search takes the bits once the popular columns outweigh a scan.
	for u := range x.Users() {
		if s.pop.entries(x, x.Row(u)) > x.Users() {
			if got, want := slices.Clone(s.search(u, x.Row(u), 30, sc)), s.searchMode(u, x.Row(u), 30, sc, false); !slices.Equal(got, want) {
				t.Fatalf("user %d: search %v, sparse %v", u, got, want)
			}
			return
		}
	}
	t.Fatal("no user whose popular items outweigh a scan")
}

// The longest cosine list a NeighbourCache reports without building its
// lists (maxCooccurring) is the longest list ItemCosineKNN builds, at
// every k_max, on sparse and dense random data, and on a matrix whose
// longest list is short (three disjoint blocks).
func TestNeighbourCacheMaxRow_withoutLists(t *testing.T) {
	ctx := context.Background()
	blocks := []Pair{}
	for b := range 3 {
		for u := range 4 {
			for i := range b + 2 {
				blocks = append(blocks, Pair{User: uint32(4*b + u), Item: uint32(10*b + i)})
			}
		}
	}
	xb, err := NewMatrix(12, 30, blocks)
	if err != nil {
		t.Fatal(err)
	}
	xs := map[string]*Matrix{"blocks": xb}
	for _, p := range []float64{0.02, 0.1, 0.5} {
		x, _ := randomMatrix(t, uint64(100*p), 60, 90, p)
		xs[fmt.Sprintf("p=%g", p)] = x
	}
	for name, x := range xs {
		for _, kmax := range []int{1, 3, 10, 50, 200} {
			nb, err := ItemCosineKNN(ctx, x, kmax, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewNeighbourCache(x, kmax).MaxRow(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := nb.MaxRow(); got != want {
				t.Errorf("%s, k_max %d: MaxRow without lists %d, longest list %d", name, kmax, got, want)
			}
		}
	}
	// Hand-counted: block 2 has 4 items, each co-occurring with 3 others.
	if got, _ := maxCooccurring(ctx, xb, 200); got != 3 {
		t.Errorf("blocks: %d co-occurring items, want 3", got)
	}
}

// Lists built in parallel are kept where the workers wrote them
// (fromRows), not copied into one slice; reading, cutting, cloning and
// encoding them gives what the one-slice form of the same lists gives.
func TestNeighbours_rowsForm(t *testing.T) {
	x, _ := randomMatrix(t, 7, 50, 35, 0.25)
	got, _ := ItemCosineKNN(context.Background(), x, 6, nil)
	if got.rows == nil {
		t.Fatal("the KNN lists were copied into one slice")
	}
	flat := got.Clone()
	if flat.rows != nil || len(flat.ent) != got.Len() {
		t.Fatalf("the clone is not one slice of %d entries", got.Len())
	}
	for r := 0; r < got.Rows(); r++ {
		if len(got.Row(r)) > 0 && &flat.Row(r)[0] == &got.Row(r)[0] {
			t.Fatalf("the clone shares row %d", r)
		}
	}
	checkLists(t, got, func(r int) []Neighbour { return flat.Row(r) })
	checkLists(t, got.Truncate(2), func(r int) []Neighbour { return flat.Truncate(2).Row(r) })
	if encodedLists(got) != encodedLists(flat) {
		t.Fatal("the two forms encode differently")
	}
	if e := fromRows(nil); e.Rows() != 0 || e.Len() != 0 {
		t.Fatalf("no rows: Rows %d, Len %d", e.Rows(), e.Len())
	}
	var a rowArena
	one := a.keep([]Neighbour{{1, 0.5}})
	two := a.keep([]Neighbour{{2, 0.25}})
	if cap(one) != 1 || &a.buf[0] != &one[0] || &a.buf[1] != &two[0] {
		t.Fatal("the arena's lists are not consecutive, each capped at its length")
	}
}

// encodedLists is WriteNeighbours' encoding of nb.
func encodedLists(nb *Neighbours) string {
	var e blob.Encoder
	WriteNeighbours(&e, nb)
	return string(e.Bytes())
}
