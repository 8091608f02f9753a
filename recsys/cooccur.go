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
// the catalogue size.
var slimPopularItems = 2048

// coCounter answers co(l, m) = |O⁺l ∩ O⁺m|, the entries of XᵀX, for the
// pairs of items fsSLIM's Gram matrices need (fitSLIM). Popular items
// have the long columns that make a count expensive, so it precomputes
// the counts among the P most popular items in one accumulator pass and
// keeps their user sets as bitsets; a count with a less popular item then
// reads that item's column only. It is immutable once built.
type coCounter struct {
	x     *Matrix
	slot  []int32  // item → index among the popular items, −1 for the rest
	pop   []uint32 // the popular items, by slot
	pp    []uint32 // pp[a·P + b] = co(pop[a], pop[b])
	words int      // bitset words per popular item
	bits  []uint64 // bits[a·words : (a+1)·words] is O⁺pop[a]
}

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

// gram fills g (len(items)², row-major) with co(items[q], items[r]), the
// Gram matrix X_Sᵀ X_S of the item set S = items, using mark (one flag
// per user, all false, left all false) as scratch space.
func (c *coCounter) gram(items []Neighbour, g []float64, mark []bool) {
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
