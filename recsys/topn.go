package recsys

import (
	"math"
	"slices"
)

// tieOrder is the order of every ranking in this project: decreasing
// score, ties by decreasing popularity, then by ascending index
// (dissertation §4.7.3 breaks ties by global popularity). A Ranker
// precomputes the popularity-then-index part as one position per item
// (prank); without it the popularity counts are compared (pop, which may be
// shorter than the catalogue: missing counts are 0).
type tieOrder struct {
	prank []int32
	pop   []uint32
}

func (t tieOrder) popOf(i uint32) uint32 {
	if int(i) < len(t.pop) {
		return t.pop[i]
	}
	return 0
}

// first reports whether a precedes b among items of equal score.
func (t tieOrder) first(a, b uint32) bool {
	if t.prank != nil {
		return t.prank[a] < t.prank[b]
	}
	pa, pb := t.popOf(a), t.popOf(b)
	return pa > pb || (pa == pb && a < b)
}

// before reports whether item a is ranked before item b.
func (t tieOrder) before(scores []float64, a, b uint32) bool {
	sa, sb := scores[a], scores[b]
	return sa > sb || (sa == sb && t.first(a, b))
}

// filtered reports whether a score keeps an item out of every top-N list:
// callers set NaN or −Inf to filter items (hidden, other categories).
func filtered(s float64) bool { return math.IsNaN(s) || math.IsInf(s, -1) }

// TopN returns the n best items by score, ties broken by popularity (more
// popular first) then by index, leaving out the items in exclude (sorted
// ascending, e.g. the user's history) and items scored NaN or −Inf. It keeps
// a heap of n items rather than sorting the catalogue: O(|I| log n).
// popularity may be shorter than scores (missing counts are 0).
func TopN(scores []float64, popularity []uint32, exclude []uint32, n int) []uint32 {
	return TopNKeep(scores, popularity, exclude, nil, n)
}

// TopNKeep is TopN that also leaves out the items keep rejects (nil keeps
// all). keep is asked only of an item that would enter the n kept so far,
// so a costly test (a filter expression) runs on few of the items.
func TopNKeep(scores []float64, popularity []uint32, exclude []uint32, keep func(uint32) bool, n int) []uint32 {
	if n <= 0 {
		return nil
	}
	q := topHeap{t: tieOrder{pop: popularity}, scores: scores, n: n, h: make([]uint32, 0, min(n, len(scores)))}
	ex := 0
	// Once n items are kept, an item scored below the worst of them (or
	// NaN) cannot enter: one comparison passes over most of the catalogue.
	floor := math.Inf(-1)
	for i, s := range scores {
		if q.full() && !(s >= floor) {
			continue
		}
		item := uint32(i)
		for ex < len(exclude) && exclude[ex] < item {
			ex++
		}
		if ex < len(exclude) && exclude[ex] == item {
			continue
		}
		if filtered(s) {
			continue
		}
		if keep != nil && (!q.enters(item) || !keep(item)) {
			continue
		}
		q.push(item)
		if q.full() {
			floor = scores[q.h[0]]
		}
	}
	return q.sorted()
}

// topHeap keeps the n best items by score in the tie order: a heap whose
// root is the worst item kept.
type topHeap struct {
	t      tieOrder
	scores []float64
	n      int
	h      []uint32
}

// full reports whether n items are kept; the worst of them is then h[0].
func (q *topHeap) full() bool { return len(q.h) == q.n }

func (q *topHeap) worse(a, b uint32) bool { return q.t.before(q.scores, b, a) }

// enters reports whether push(item) would keep item: the heap is not full
// or item ranks before its worst. A filter need be asked only then, as
// the worst kept item only gets better.
func (q *topHeap) enters(item uint32) bool {
	return len(q.h) < q.n || q.t.before(q.scores, item, q.h[0])
}

// push offers item, whose score must be set.
func (q *topHeap) push(item uint32) {
	h := q.h
	if len(h) < q.n {
		h = append(h, item)
		for c := len(h) - 1; c > 0; {
			p := (c - 1) / 2
			if !q.worse(h[c], h[p]) {
				break
			}
			h[c], h[p] = h[p], h[c]
			c = p
		}
		q.h = h
		return
	}
	if !q.t.before(q.scores, item, h[0]) {
		return
	}
	h[0] = item
	for c := 0; ; {
		w := c
		if l := 2*c + 1; l < len(h) && q.worse(h[l], h[w]) {
			w = l
		}
		if r := 2*c + 2; r < len(h) && q.worse(h[r], h[w]) {
			w = r
		}
		if w == c {
			break
		}
		h[c], h[w] = h[w], h[c]
		c = w
	}
}

// sorted orders the kept items best first and returns them.
func (q *topHeap) sorted() []uint32 {
	slices.SortFunc(q.h, func(a, b uint32) int {
		if q.t.before(q.scores, a, b) {
			return -1
		}
		if q.t.before(q.scores, b, a) {
			return 1
		}
		return 0
	})
	return q.h
}

// Ranks returns rank(i, y) for every item of relevant (Def. 4.1: the number
// of items ranked before i, 0 at the top), where y ranks every item not in
// exclude by score, ties broken by popularity then index, as TopN does.
// exclude (the user's training items) must be sorted ascending and disjoint
// from relevant. Scores must be finite. It costs O(|I| log |relevant|); a
// Ranker does the same a little faster for many users.
func Ranks(scores []float64, popularity []uint32, exclude []uint32, relevant []uint32) []int {
	return ranks(scores, tieOrder{pop: popularity}, exclude, relevant)
}

// SortRanked orders items as TopN ranks them: decreasing score, ties by
// popularity then index (tieOrder).
func SortRanked(items []uint32, scores []float64, popularity []uint32) {
	t := tieOrder{pop: popularity}
	slices.SortFunc(items, func(a, b uint32) int {
		switch {
		case t.before(scores, a, b):
			return -1
		case t.before(scores, b, a):
			return 1
		}
		return 0
	})
}
