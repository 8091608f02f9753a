package recsys

import (
	"math/bits"
	"slices"
)

// popularBits holds, for the few most popular items, which users hold them:
// one bit per (user, item), words words a user. Under the cosine (§4.3) a
// co-occurrence sum is a count, so KNN(u) can take the popular items of u's
// history as a mask and count them against every user by popcount, instead
// of adding one to each of the tens of thousands of users in each of those
// columns. On `recsys scale`'s 20M shape the 64 most popular items are 80%
// of the adds a search makes.
type popularBits struct {
	words int
	bit   []int32  // item → bit, −1 for the items not held as bits
	rows  []uint64 // user v's bits are rows[v*words : (v+1)*words]
}

// Popular items are held as bits when at least one user in
// popularBitsShare holds them, at most popularBitsMax of them: a bit costs
// every search a popcount per user, an add only the users of its column.
const (
	popularBitsShare = 32
	popularBitsMax   = 128
)

// newPopularBits picks the popular items of x and lays out their bits, nil
// when no item is that popular.
func newPopularBits(x *Matrix) *popularBits {
	order := make([]int32, 0, x.nItems)
	for j := range x.nItems {
		if x.ItemCount(j)*popularBitsShare >= x.nUsers && x.ItemCount(j) > 0 {
			order = append(order, int32(j))
		}
	}
	if len(order) == 0 {
		return nil
	}
	slices.SortStableFunc(order, func(a, b int32) int { return x.ItemCount(int(b)) - x.ItemCount(int(a)) })
	order = order[:min(len(order), popularBitsMax)]
	p := &popularBits{words: (len(order) + 63) / 64, bit: make([]int32, x.nItems)}
	for j := range p.bit {
		p.bit[j] = -1
	}
	for b, j := range order {
		p.bit[j] = int32(b)
	}
	p.rows = make([]uint64, x.nUsers*p.words)
	for b, j := range order {
		for _, v := range x.Col(int(j)) {
			p.rows[int(v)*p.words+b/64] |= 1 << (b % 64)
		}
	}
	return p
}

// entries is the number of adds the popular items of history would cost
// an accumulation.
func (p *popularBits) entries(x *Matrix, history []uint32) int {
	n, prev := 0, -1
	for _, j := range history {
		if int(j) < x.nItems && int(j) != prev && p.bit[j] >= 0 {
			n += x.ItemCount(int(j))
		}
		prev = int(j)
	}
	return n
}

// search returns KNN(u) under the cosine for history (self left out, −1
// for none), in KNN order, aliasing best. The counts are integers, so they
// and the similarities sum(s)/√(c·counts(s)) are exactly those of coAcc's
// accumulation. cnt holds a count per training user and is left zero.
func (p *popularBits) search(x *Matrix, self int, history []uint32, k int, cnt []uint32, mask []uint64, best *topK) []Neighbour {
	clear(mask)
	known, prev := 0, -1
	for _, j := range history {
		if int(j) >= x.nItems || int(j) == prev {
			continue
		}
		prev = int(j)
		known++
		if b := p.bit[j]; b >= 0 {
			mask[b/64] |= 1 << (b % 64)
			continue
		}
		for _, v := range x.Col(int(j)) {
			cnt[v]++
		}
	}
	best.reset(k)
	if k <= 0 {
		clear(cnt)
		return best.sorted()
	}
	c := float64(known)
	w := p.words
	for v := range cnt {
		n := cnt[v]
		cnt[v] = 0
		for i, m := range p.rows[v*w : v*w+w] {
			n += uint32(bits.OnesCount64(m & mask[i]))
		}
		if n == 0 || v == self {
			continue
		}
		best.offerCosine(uint32(v), float64(n), c, float64(x.UserCount(v)))
	}
	return best.sorted()
}
