package recsys

import "slices"

// Ranker ranks many users' scores under one popularity vector: the order of
// TopN and Ranks (score, then popularity, then index), with the
// popularity-and-index tie-break precomputed as one position per item so
// that the scan over the catalogue costs a comparison or two per item. The
// offline evaluation ranks every user of a fold with one Ranker.
type Ranker struct {
	// prank[i] is the position of item i when all items are sorted by
	// decreasing popularity, then increasing index.
	prank []int32
}

// NewRanker prepares rankings of n items under the given popularity
// (missing counts are 0).
func NewRanker(popularity []uint32, n int) *Ranker {
	t := tieOrder{pop: popularity}
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		switch {
		case a == b:
			return 0
		case t.first(a, b):
			return -1
		}
		return 1
	})
	prank := make([]int32, n)
	for pos, i := range order {
		prank[i] = int32(pos)
	}
	return &Ranker{prank: prank}
}

// Positions returns the tie-break position of every item: its place when
// all items are sorted by decreasing popularity, then increasing index
// (what decides between equal scores). Do not modify it.
func (rk *Ranker) Positions() []int32 { return rk.prank }

// Ranks is the package function Ranks with this Ranker's popularity; scores
// must have the Ranker's item count.
//
// It is ranks specialised to the precomputed tie order: the relevant
// items' scores and tie positions are copied best first into two short
// arrays, so that the scan over the catalogue (every validation user, every
// grid point) compares against local values instead of following item
// indices into the score and popularity arrays.
func (rk *Ranker) Ranks(scores []float64, exclude, relevant []uint32) []int {
	h := len(relevant)
	out := make([]int, h)
	if h == 0 {
		return out
	}
	prank := rk.prank
	order, rs, rp := rk.relevantOrder(relevant, func(i uint32) float64 { return scores[i] })
	sortedRel := slices.Sorted(slices.Values(relevant))
	sWorst, pWorst := rs[h-1], rp[h-1]
	// diff[q] counts the other items ranked after exactly q relevant items.
	diff := make([]int, h+1)
	ex, rel := 0, 0
	for i, s := range scores {
		// Most items come after every relevant item and change no rank.
		if s < sWorst || (s == sWorst && prank[i] >= pWorst) {
			continue
		}
		item := uint32(i)
		for ex < len(exclude) && exclude[ex] < item {
			ex++
		}
		if ex < len(exclude) && exclude[ex] == item {
			continue
		}
		for rel < h && sortedRel[rel] < item {
			rel++
		}
		if rel < h && sortedRel[rel] == item {
			continue
		}
		diff[relevantBefore(rs, rp, s, prank[i])]++
	}
	before := 0
	for q, k := range order {
		before += diff[q]
		out[k] = q + before
	}
	return out
}

// relevantOrder sorts the relevant items best first by score, then tie
// position: order holds their indices in relevant, rs and rp their
// scores and tie positions in that order.
func (rk *Ranker) relevantOrder(relevant []uint32, score func(uint32) float64) (order []int, rs []float64, rp []int32) {
	h, prank := len(relevant), rk.prank
	order = make([]int, h)
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		ia, ib := relevant[a], relevant[b]
		sa, sb := score(ia), score(ib)
		switch {
		case a == b:
			return 0
		case sa > sb || (sa == sb && prank[ia] < prank[ib]):
			return -1
		}
		return 1
	})
	rs, rp = make([]float64, h), make([]int32, h)
	for q, k := range order {
		rs[q], rp[q] = score(relevant[k]), prank[relevant[k]]
	}
	return order, rs, rp
}

// relevantBefore is the number of relevant items (scores rs, tie
// positions rp, best first) ranked before an item of score s and tie
// position p.
func relevantBefore(rs []float64, rp []int32, s float64, p int32) int {
	lo, hi := 0, len(rs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if rs[mid] > s || (rs[mid] == s && rp[mid] < p) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// SparseScorer is implemented by models whose score is 0 for every item a
// history does not reach, which on a wide catalogue is most of them.
// ScoreSparse appends to touched[:0] the items the history reaches, each
// once, and sets their scores in scores (as Score would; every score it
// sets is at least 0); the other entries of scores are left as they were,
// and Score gives them 0. It returns false, setting nothing, when it
// would not save work (the caller then scores every item).
type SparseScorer interface {
	ScoreSparse(history []uint32, scores []float64, touched []uint32) ([]uint32, bool)
}

// RanksSparse is Ranks for scores that are 0 outside touched (a
// SparseScorer's): only the touched items' entries of scores are read.
// The touched items are placed among the relevant ones as Ranks places
// every item; the others all score 0, so those ranked before a relevant
// item of score 0 are the ones with a lower tie position, counted from
// the positions. A user costs O(|touched|·log|touched| + |exclude| +
// |relevant|²) instead of a pass over the catalogue. touched must not
// repeat an item, and its scores must be at least 0; exclude is sorted
// ascending and disjoint from relevant.
func (rk *Ranker) RanksSparse(scores []float64, touched, exclude, relevant []uint32) []int {
	h := len(relevant)
	out := make([]int, h)
	if h == 0 {
		return out
	}
	prank := rk.prank
	sortedT := slices.Sorted(slices.Values(touched))
	isTouched := func(i uint32) bool { _, ok := slices.BinarySearch(sortedT, i); return ok }
	score := func(i uint32) float64 {
		if isTouched(i) {
			return scores[i]
		}
		return 0
	}
	order, rs, rp := rk.relevantOrder(relevant, score)
	sortedRel := slices.Sorted(slices.Values(relevant))
	// diff[q] counts the touched items ranked after exactly q relevant
	// items, as in Ranks.
	diff := make([]int, h+1)
	tpos := make([]int32, 0, len(touched)) // tie positions of the touched
	for _, i := range touched {
		tpos = append(tpos, prank[i])
		if _, ex := slices.BinarySearch(exclude, i); ex {
			continue
		}
		if _, rel := slices.BinarySearch(sortedRel, i); rel {
			continue
		}
		diff[relevantBefore(rs, rp, scores[i], prank[i])]++
	}
	slices.Sort(tpos)
	// The tie positions of the excluded and the relevant items that are
	// not touched: with the touched, the items that are not untouched
	// candidates.
	var other []int32
	for k, i := range exclude {
		if int(i) < len(prank) && !isTouched(i) && (k == 0 || exclude[k-1] != i) {
			other = append(other, prank[i]) // each excluded item once
		}
	}
	for _, i := range relevant {
		if !isTouched(i) {
			other = append(other, prank[i])
		}
	}
	slices.Sort(other)
	below := func(sorted []int32, p int32) int { n, _ := slices.BinarySearch(sorted, p); return n }
	before := 0
	for q, k := range order {
		before += diff[q]
		out[k] = q + before
		if rs[q] == 0 {
			// Of the rp[q] items with a lower tie position, the untouched
			// candidates (score 0) rank before this one.
			out[k] += int(rp[q]) - below(tpos, rp[q]) - below(other, rp[q])
		}
	}
	return out
}

// ranks implements Ranks in O(|I| log |relevant|).
func ranks(scores []float64, t tieOrder, exclude, relevant []uint32) []int {
	h := len(relevant)
	out := make([]int, h)
	if h == 0 {
		return out
	}
	order := make([]int, h) // positions of relevant, best first
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case t.before(scores, relevant[a], relevant[b]):
			return -1
		}
		return 1
	})
	sortedRel := slices.Sorted(slices.Values(relevant))
	worst := relevant[order[h-1]]
	sWorst := scores[worst]
	// diff[q] counts the other items ranked after exactly q relevant items.
	diff := make([]int, h+1)
	ex, rel := 0, 0
	for i, s := range scores {
		// Most items come after every relevant item and change no rank:
		// test that first, with the cheapest comparisons.
		item := uint32(i)
		if s < sWorst || (s == sWorst && !t.first(item, worst)) {
			continue
		}
		for ex < len(exclude) && exclude[ex] < item {
			ex++
		}
		if ex < len(exclude) && exclude[ex] == item {
			continue
		}
		for rel < h && sortedRel[rel] < item {
			rel++
		}
		if rel < h && sortedRel[rel] == item {
			continue
		}
		// q = number of relevant items ranked before item.
		lo, hi := 0, h
		for lo < hi {
			mid := (lo + hi) / 2
			if t.before(scores, relevant[order[mid]], item) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		diff[lo]++
	}
	before := 0
	for s, k := range order {
		before += diff[s]
		out[k] = s + before
	}
	return out
}
