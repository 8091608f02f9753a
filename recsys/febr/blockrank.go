package febr

import (
	"math"
	"math/bits"
	"slices"
)

// blockRanker computes ranks from a feature block without scoring the
// whole catalogue: every item outside the block has the missing score, so
// the items of that block ranked before a relevant item are counted from
// the popularity positions alone.
type blockRanker struct {
	score []float64 // of the block's items; NaN for history items
	rel   []int     // relevant items' positions in order
	rs    []float64 // relevant items' scores
	inBlk []bool
	diff  []int
	known []uint64 // a bit per popularity position: the history and block items
}

// knownBefore is the number of history and block items whose popularity
// position is below p.
func (r *blockRanker) knownBefore(p int32) int {
	w := int(p / 64)
	n := bits.OnesCount64(r.known[w] & (1<<(uint(p)%64) - 1))
	for _, b := range r.known[:w] {
		n += bits.OnesCount64(b)
	}
	return n
}

// ranks returns rank(i, y) (Def. 4.1) of every relevant item under the
// ranking y of the items not in hist by score (θ·z in the block, sMiss
// elsewhere), then popularity position prank, as Ranker.Ranks would.
func (r *blockRanker) ranks(b *block, dim int, theta []float64, sMiss float64, hist, relevant []uint32, prank []int32, nItems int) []int {
	h := len(relevant)
	out := make([]int, h)
	if h == 0 {
		return out
	}
	r.score = slices.Grow(r.score[:0], len(b.items))[:len(b.items)]
	nCand := 0 // block items not in hist
	t := 0
	for q, i := range b.items {
		for t < len(hist) && hist[t] < i {
			t++
		}
		if t < len(hist) && hist[t] == i {
			r.score[q] = math.NaN()
			continue
		}
		r.score[q] = dot(theta, b.row(q, dim))
		nCand++
	}
	r.rs = slices.Grow(r.rs[:0], h)[:h]
	r.inBlk = slices.Grow(r.inBlk[:0], h)[:h]
	anyTie := false
	for k, v := range relevant {
		r.rs[k], r.inBlk[k] = sMiss, false
		if q, ok := slices.BinarySearch(b.items, v); ok {
			r.rs[k], r.inBlk[k] = r.score[q], true
		}
		anyTie = anyTie || r.rs[k] == sMiss
	}
	before := func(sa float64, a uint32, sb float64, b uint32) bool {
		return sa > sb || (sa == sb && prank[a] < prank[b])
	}
	r.rel = slices.Grow(r.rel[:0], h)[:h]
	for k := range r.rel {
		r.rel[k] = k
	}
	slices.SortFunc(r.rel, func(a, c int) int {
		switch {
		case a == c:
			return 0
		case before(r.rs[a], relevant[a], r.rs[c], relevant[c]):
			return -1
		}
		return 1
	})
	// Block items: diff[q] counts those ranked after exactly q relevant
	// items (relevant items themselves excluded).
	r.diff = slices.Grow(r.diff[:0], h+1)[:h+1]
	clear(r.diff)
	worst := r.rs[r.rel[h-1]]
	next := 0 // relevant[next] is the first relevant item ≥ the block item
	for q, i := range b.items {
		for next < h && relevant[next] < i {
			next++
		}
		s := r.score[q]
		// Items ranked after every relevant item change no rank; NaN
		// (history) compares false and is skipped too.
		if !(s >= worst) || (next < h && relevant[next] == i) {
			continue
		}
		lo, hi := 0, h
		for lo < hi {
			mid := (lo + hi) / 2
			k := r.rel[mid]
			if before(r.rs[k], relevant[k], s, i) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		r.diff[lo]++
	}
	// Popularity positions of the items that are not in the missing block.
	if anyTie {
		r.known = grow(r.known, (nItems+63)/64)
		for _, i := range hist {
			setBit(r.known, uint32(prank[i]))
		}
		for q, i := range b.items {
			if !math.IsNaN(r.score[q]) {
				setBit(r.known, uint32(prank[i]))
			}
		}
	}
	// The missing block: items neither in hist nor in the block.
	nMiss := nItems - len(hist) - nCand
	relMiss := 0
	for k := range relevant {
		if !r.inBlk[k] {
			relMiss++
		}
	}
	cum := 0
	for pos, k := range r.rel {
		cum += r.diff[pos]
		v, sv := relevant[k], r.rs[k]
		rank := pos + cum // relevant and block items before v
		switch {
		case sv < sMiss:
			// Every missing item is before v; the relevant ones among
			// them are counted in pos already.
			rank += nMiss - relMiss
		case sv == sMiss:
			// Missing items (other than v) before v by popularity: all
			// items with a smaller position, less the known ones and the
			// other relevant items that are missing (counted above).
			p := int(prank[v])
			n := p - r.knownBefore(prank[v])
			for k2, v2 := range relevant {
				if v2 != v && !r.inBlk[k2] && prank[v2] < prank[v] {
					n--
				}
			}
			rank += n
		}
		out[k] = rank
	}
	return out
}
