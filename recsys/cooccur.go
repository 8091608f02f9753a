package recsys

import (
	"context"
	"math/bits"
	"slices"
)

// slimPopularItems is how many of the most popular items a coCounter
// keeps exact pairwise counts and user bitsets for (a variable so that
// tests can exercise the other paths on small data). Its memory is
// P²·4 bytes plus P·|U|/8 bytes: 16 MiB + 36 MiB at 142k users, whatever
// the catalogue size, plus the rare × popular table (coRareBudget).
var slimPopularItems = 2048

// coCounter answers co(l, m) = |O⁺l ∩ O⁺m|, the entries of XᵀX, for the
// pairs of items fsSLIM's Gram matrices need (fitSLIM). Popular items
// have the long columns that make a count expensive, so it precomputes
// the counts among the P most popular items in one accumulator pass and
// keeps their user sets as bitsets, and, within coRareBudget, the counts
// between every other item and the popular ones. It is immutable once
// built.
type coCounter struct {
	x     *Matrix
	slot  []int32  // item → index among the popular items, −1 for the rest
	pop   []uint32 // the popular items, by slot
	pp    []uint32 // pp[a·P + b] = co(pop[a], pop[b])
	words int      // bitset words per popular item
	bits  []uint64 // bits[a·words : (a+1)·words] is O⁺pop[a]
	// rp[rslot[l]·P + a] = co(l, pop[a]) for every item l outside the
	// popular ones (rslot −1 for the popular), when the table fits in
	// coRareBudget; nil otherwise.
	rslot []int32
	rp    []uint32
}

// coRareBudget bounds the table of counts between every rare item and
// every popular one: 204 MB at MovieLens-20M's 27,000 items. A variable so
// that tests can exercise both paths.
var coRareBudget int64 = 256 << 20

// newCoCounter builds the counter of x with the p most popular items
// (ties by index), in parallel over the popular items.
func newCoCounter(ctx context.Context, x *Matrix, p int) (*coCounter, error) {
	n := x.Items()
	p = min(p, n)
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortStableFunc(order, func(a, b uint32) int { return x.ItemCount(int(b)) - x.ItemCount(int(a)) })
	c := &coCounter{x: x, slot: make([]int32, n), pop: order[:p:p], words: (x.Users() + 63) / 64}
	for i := range c.slot {
		c.slot[i] = -1
	}
	for a, i := range c.pop {
		c.slot[i] = int32(a)
	}
	// The rows restricted to the popular items, as slots.
	ptr := make([]int, x.Users()+1)
	var idx []int32
	for u := range x.Users() {
		for _, i := range x.Row(u) {
			if a := c.slot[i]; a >= 0 {
				idx = append(idx, a)
			}
		}
		ptr[u+1] = len(idx)
	}
	c.pp = make([]uint32, p*p)
	c.bits = make([]uint64, p*c.words)
	err := ParallelFor(ctx, p, 8, "", nil, func() func(lo, hi int) {
		return func(lo, hi int) {
			for a := lo; a < hi; a++ {
				row := c.pp[a*p : (a+1)*p]
				set := c.bits[a*c.words : (a+1)*c.words]
				for _, u := range x.Col(int(c.pop[a])) {
					set[u/64] |= 1 << (u % 64)
					for _, b := range idx[ptr[u]:ptr[u+1]] {
						row[b]++
					}
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if rare := n - p; p > 0 && rare > 0 && int64(rare)*int64(p)*4 <= coRareBudget {
		// Each rare item's counts against every popular item: its users'
		// popular items, Σ_l Σ_{u ∈ O⁺l} |O⁺u ∩ popular| in all, once,
		// where the same counts pair by pair cost a column scan each,
		// every time a set needs one.
		c.rslot = make([]int32, n)
		var rareItems []uint32
		for i := range c.rslot {
			c.rslot[i] = -1
			if c.slot[i] < 0 {
				c.rslot[i] = int32(len(rareItems))
				rareItems = append(rareItems, uint32(i))
			}
		}
		c.rp = make([]uint32, rare*p)
		err = ParallelFor(ctx, rare, 64, "", nil, func() func(lo, hi int) {
			return func(lo, hi int) {
				for r := lo; r < hi; r++ {
					row := c.rp[r*p : (r+1)*p]
					for _, u := range x.Col(int(rareItems[r])) {
						for _, b := range idx[ptr[u]:ptr[u+1]] {
							row[b]++
						}
					}
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// has reports whether user u is in O⁺ of the popular item in slot a.
func (c *coCounter) has(a int32, u uint32) bool {
	return c.bits[int(a)*c.words+int(u/64)]&(1<<(u%64)) != 0
}

// popcount is |O⁺pop[a]|, for tests.
func (c *coCounter) popcount(a int32) int {
	n := 0
	for _, w := range c.bits[int(a)*c.words : (int(a)+1)*c.words] {
		n += bits.OnesCount64(w)
	}
	return n
}

// gramScratch is one goroutine's scratch space for coCounter.gram.
type gramScratch struct {
	rare    []int32  // positions in the set of the items outside the popular ones
	at      []int32  // per user: its row in masks + 1; 0 between calls
	touched []uint32 // the users met, by row
	masks   []uint64 // a bit per rare item of the set, per row
	held    []int32  // one user's rare items' positions
}

// newGramScratch is the scratch space of a matrix of users users.
func newGramScratch(users int) *gramScratch { return &gramScratch{at: make([]int32, users)} }

// gram fills g (len(items)², row-major) with co(items[q], items[r]), the
// Gram matrix X_Sᵀ X_S of the item set S = items, using sc (left ready for
// the next call) as scratch space.
//
// A pair of popular items is read from pp; a popular and a rare item from
// rp, or, without it, counted over the rare item's column against the
// popular one's bitset; two rare items from their users' bitsets (below).
// Counting pair by pair over columns took 1,351 of the first 3,625 CPU
// seconds of an auto run at 20M events (BenchmarkCoCounterGram).
func (c *coCounter) gram(items []Neighbour, g []float64, sc *gramScratch) {
	k := len(items)
	x := c.x
	np := len(c.pop)
	sc.rare = sc.rare[:0]
	for q, e := range items {
		l := e.Index
		g[q*k+q] = float64(x.ItemCount(int(l)))
		sl := c.slot[l]
		if sl < 0 {
			sc.rare = append(sc.rare, int32(q))
		}
		for r := q + 1; r < k; r++ {
			m := items[r].Index
			sm := c.slot[m]
			if sl < 0 && sm < 0 {
				g[q*k+r], g[r*k+q] = 0, 0 // two rare items: counted below
				continue
			}
			var v int
			switch {
			case sl >= 0 && sm >= 0:
				v = int(c.pp[int(sl)*np+int(sm)])
			case c.rp != nil && sl >= 0:
				v = int(c.rp[int(c.rslot[m])*np+int(sl)])
			case c.rp != nil:
				v = int(c.rp[int(c.rslot[l])*np+int(sm)])
			case sl >= 0:
				for _, u := range x.Col(int(m)) {
					if c.has(sl, u) {
						v++
					}
				}
			default:
				for _, u := range x.Col(int(l)) {
					if c.has(sm, u) {
						v++
					}
				}
			}
			g[q*k+r], g[r*k+q] = float64(v), float64(v)
		}
	}
	// Two rare items: every user of a rare item gets a bitset of the rare
	// items of S it holds, and adds 1 to each pair of them, so the count
	// costs the pairs' co-counts instead of a column scan per pair.
	rare := sc.rare
	if len(rare) < 2 {
		return
	}
	words := (len(rare) + 63) / 64
	sc.touched, sc.masks = sc.touched[:0], sc.masks[:0]
	for a, q := range rare {
		for _, u := range x.Col(int(items[q].Index)) {
			row := sc.at[u]
			if row == 0 {
				sc.touched = append(sc.touched, u)
				sc.masks = append(sc.masks, make([]uint64, words)...)
				row = int32(len(sc.touched))
				sc.at[u] = row
			}
			sc.masks[int(row-1)*words+a/64] |= 1 << (uint(a) % 64)
		}
	}
	for t, u := range sc.touched {
		sc.at[u] = 0
		sc.held = sc.held[:0]
		for w, bw := range sc.masks[t*words : (t+1)*words] {
			for bw != 0 {
				sc.held = append(sc.held, rare[w*64+bits.TrailingZeros64(bw)])
				bw &= bw - 1
			}
		}
		for a, q := range sc.held {
			row := g[int(q)*k:]
			for _, r := range sc.held[a+1:] {
				row[r]++
			}
		}
	}
	// rare is in position order, so the counts are in the upper triangle.
	for a, q := range rare {
		for _, r := range rare[a+1:] {
			g[int(r)*k+int(q)] = g[int(q)*k+int(r)]
		}
	}
}
