package recsys

import (
	"slices"
	"sync"
)

// itemSide is an item-item affinity restricted to KNN lists: fwd holds
// A(i, j) for j ∈ KNN(i) and rev the same entries indexed by j, so that
// item-p scores come from the user's items alone (§4.5.2, Thm 4.3).
type itemSide struct {
	nItems int
	fwd    *Neighbours
	rev    *Neighbours
	// rank, when set, holds the reversed lists instead of rev, laid out
	// for top-n queries (see rankIndex).
	rank *rankIndex
}

func newItemSide(nItems int, fwd *Neighbours) *itemSide {
	return &itemSide{nItems: nItems, fwd: fwd, rev: fwd.Reverse(nItems)}
}

// newRankedItemSide is newItemSide with the reversed lists in a
// rankIndex, for the models that answer top-n queries from them (ItemP).
func newRankedItemSide(nItems int, fwd *Neighbours) *itemSide {
	return &itemSide{nItems: nItems, fwd: fwd, rank: newRankIndex(nItems, fwd)}
}

// accumulate adds scale·aggsum(φ_item(u, i)) = scale·Σ_{j ∈ O⁺u ∩ KNN(i)} A(i, j)
// to scores[i] for every item i (Thm 4.3). It returns c(u), the number of
// history items known to the model.
func (s *itemSide) accumulate(history []uint32, scores []float64, scale float64) int {
	if s.rank != nil {
		return s.rank.accumulate(history, scores, scale)
	}
	known := 0
	prev := -1
	for _, j := range history {
		if int(j) >= s.nItems || int(j) == prev {
			continue
		}
		prev = int(j)
		known++
		for _, e := range s.rev.Row(int(j)) {
			scores[e.Index] += scale * e.Value
		}
	}
	return known
}

// userSide is user-p (§4.5.3) over a training matrix. KNN(u) is computed
// at scoring time from the live history against every training user through
// the item→user lists, so recommendations follow the user's latest
// interactions without a retrain.
type userSide struct {
	x *Matrix
	k int
	// weight is nil for the cosine similarity, or 1/√c(j) per item for the
	// KUNN user affinity of Eq. (4.6).
	weight []float64
	pool   sync.Pool
	// lists, when not nil, memoises KNN(u) at kmax for training users
	// scored with their training row (NeighbourCache.forUsers).
	lists *userLists
	kmax  int
	// pop, under the cosine, holds the most popular items as bits
	// (popularBits); nil under KUNN, whose sums are not counts.
	pop *popularBits
}

type userScratch struct {
	co   coAcc
	best topK
	// cnt and mask are popularBits.search's, when the side has pop.
	cnt  []uint32
	mask []uint64
}

func newUserSide(x *Matrix, k int, kunn bool) *userSide {
	s := &userSide{x: x, k: k}
	if kunn {
		s.weight = kunnWeights(x.byItem)
	} else {
		s.pop = newPopularBits(x)
	}
	s.pool.New = func() any { return s.newScratch() }
	return s
}

// newScratch returns the scratch of one search over s.
func (s *userSide) newScratch() *userScratch {
	sc := &userScratch{co: coAcc{acc: make([]float64, s.x.nUsers)}}
	if s.pop != nil {
		sc.cnt, sc.mask = make([]uint32, s.x.nUsers), make([]uint64, s.pop.words)
	}
	return sc
}

// knownCount is c(u) for a live history: its distinct items that the
// training matrix knows.
func knownCount(history []uint32, nItems int) int {
	n, prev := 0, -1
	for _, j := range history {
		if int(j) < nItems && int(j) != prev {
			n++
			prev = int(j)
		}
	}
	return n
}

// withCache makes s memoise the neighbours of training users in c, when c
// fits x and k (NeighbourCache.forUsers).
func (s *userSide) withCache(c *NeighbourCache) *userSide {
	kind := SimCosine
	if s.weight != nil {
		kind = SimKUNN
	}
	if s.lists = c.forUsers(s.x, s.k, kind); s.lists != nil {
		s.kmax = c.kmax
	}
	return s
}

// isRow reports whether history is row u of x itself (the same memory),
// as when the evaluation scores a training user.
func isRow(x *Matrix, u int, history []uint32) bool {
	if u < 0 || u >= x.nUsers {
		return false
	}
	row := x.Row(u)
	return len(row) == len(history) && (len(row) == 0 || &row[0] == &history[0])
}

// neighbours returns KNN(u) with sim(u, v) for the given history, leaving
// out training user self (−1 for none): §4.3 defines KNN(u) over U \ u.
// The result aliases sc or the memo; do not modify it.
func (s *userSide) neighbours(self int, history []uint32, sc *userScratch) []Neighbour {
	if s.lists != nil && isRow(s.x, self, history) {
		// KNN order is total (value, then index), so KNN(u) at k is the
		// prefix of KNN(u) at k_max.
		row := s.lists.rows[self].Load()
		if row == nil {
			nb := slices.Clone(s.search(self, history, s.kmax, sc))
			row = &nb
			s.lists.rows[self].Store(row)
		}
		return (*row)[:min(s.k, len(*row))]
	}
	return s.search(self, history, s.k, sc)
}

// search is neighbours at size k, without the memo: the co-occurrence
// sums of the history's items against every training user (coAcc), or,
// when its popular items alone would cost more adds than there are users,
// their counts by popcount (popularBits).
func (s *userSide) search(self int, history []uint32, k int, sc *userScratch) []Neighbour {
	if s.pop != nil && s.pop.entries(s.x, history) > s.x.nUsers {
		return s.pop.search(s.x, self, history, k, sc.cnt, sc.mask, &sc.best)
	}
	entries := 0
	for _, j := range history {
		if int(j) < s.x.nItems {
			entries += s.x.ItemCount(int(j))
		}
	}
	return s.searchMode(self, history, k, sc, entries > s.x.nUsers)
}

// searchMode is search with coAcc's mode chosen by the caller.
func (s *userSide) searchMode(self int, history []uint32, k int, sc *userScratch, dense bool) []Neighbour {
	prev := -1
	known := 0
	for _, j := range history {
		if int(j) >= s.x.nItems || int(j) == prev {
			continue
		}
		prev = int(j)
		known++
		w := 1.0
		if s.weight != nil {
			w = s.weight[j]
		}
		sc.co.add(s.x.Col(int(j)), w, self, dense)
	}
	return sc.co.top(&sc.best, k, self, dense, float64(known), s.x.byUser)
}

// searchWeighted is search for a history whose item k weighs weights[k]
// instead of 1: the live user's row is the vector w, and
//
//	A(u, v) = Σ_{j ∈ H_u ∩ H_v} w_j·ω_j / (‖w‖₂·√c(v)),
//
// with ω_j = 1 for the cosine (§4.3) and ω_j = 1/√c(j) for the KUNN user
// affinity of dissertation Eq. (4.6), ~uᵀW_I~v/(‖~u‖‖~v‖), taken with ~u =
// w: each history item's term of ~uᵀW_I~v multiplied by its weight, and
// ‖~u‖ = ‖w‖₂ in place of √c(u). With every weight 1 it is search exactly
// (‖w‖₂² = c(u)), ties broken alike (KNN order). It reads neither the
// memo nor the popcount bits, whose sums are counts. An item of weight 0
// (or not positive) adds nothing; a repeated item counts once, at its
// first weight, as search counts it once.
func (s *userSide) searchWeighted(self int, history []uint32, weights []float64, k int, sc *userScratch) []Neighbour {
	// A(u, v) does not change when w is scaled: dividing by the largest
	// weight keeps ‖w‖₂² from underflowing when every weight is tiny.
	wmax, entries := 0.0, 0
	for n, j := range history {
		if int(j) < s.x.nItems {
			if weights[n] > wmax {
				wmax = weights[n]
			}
			entries += s.x.ItemCount(int(j))
		}
	}
	dense := entries > s.x.nUsers
	norm2 := 0.0
	prev := -1
	for n, j := range history {
		if int(j) >= s.x.nItems || int(j) == prev {
			continue
		}
		prev = int(j)
		w := weights[n] / wmax
		if !(w > 0) {
			continue // coAcc takes a zero sum for an untouched row
		}
		norm2 += w * w
		if s.weight != nil {
			w *= s.weight[j]
		}
		sc.co.add(s.x.Col(int(j)), w, self, dense)
	}
	return sc.co.top(&sc.best, k, self, dense, norm2, s.x.byUser)
}

// accumulate adds aggsum(φ_user(u, i)) = Σ_{v ∈ KNN(u), X(v,i)=1} A(u, v)
// to scores[i] (Cor. 4.1), multiplied by itemScale[i] when itemScale is not
// nil.
func (s *userSide) accumulate(self int, history []uint32, scores []float64, itemScale []float64) {
	sc := s.pool.Get().(*userScratch)
	defer s.pool.Put(sc)
	s.addNeighbours(s.neighbours(self, history, sc), scores, itemScale)
}

// accumulateWeighted is accumulate over the KNN(u) of a weighted history
// (searchWeighted), never memoised.
func (s *userSide) accumulateWeighted(self int, history []uint32, weights []float64, scores []float64, itemScale []float64) {
	sc := s.pool.Get().(*userScratch)
	defer s.pool.Put(sc)
	s.addNeighbours(s.searchWeighted(self, history, weights, s.k, sc), scores, itemScale)
}

// addNeighbours adds A(u, v) (times itemScale[i], when not nil) to
// scores[i] for every item i of every neighbour v.
func (s *userSide) addNeighbours(nbs []Neighbour, scores []float64, itemScale []float64) {
	for _, nb := range nbs {
		for _, i := range s.x.Row(int(nb.Index)) {
			if itemScale != nil {
				scores[i] += nb.Value * itemScale[i]
			} else {
				scores[i] += nb.Value
			}
		}
	}
}

// UserNeighbourhood searches KNN(u), the k nearest training users of a
// live history (§4.3: over U \ u for a training user), under the cosine or
// the KUNN user similarity, as userknn, kunn-u and kunn do: the user side
// of a model of another package. It keeps the training matrix, computes
// KNN(u) when asked (so it follows the history's latest interactions) and
// is safe for concurrent use.
type UserNeighbourhood struct {
	side *userSide
}

// NewUserNeighbourhood prepares the search of the k nearest users of x
// under similarity kind (SimCosine or SimKUNN). With a cache built on x
// with k_max ≥ k, the neighbours of a training user asked with its own row
// of x are memoised there at k_max, for every model and k of the cache's
// grid (NeighbourCache).
func NewUserNeighbourhood(x *Matrix, k int, kind string, cache *NeighbourCache) *UserNeighbourhood {
	return &UserNeighbourhood{side: newUserSide(x, k, kind == SimKUNN).withCache(cache)}
}

// Matrix is the training matrix searched.
func (n *UserNeighbourhood) Matrix() *Matrix { return n.side.x }

// AppendNeighbours appends to dst KNN(u) with sim(u, v), best first, of
// the user with the given history (sorted; self as in UserScorer).
func (n *UserNeighbourhood) AppendNeighbours(dst []Neighbour, self int, history []uint32) []Neighbour {
	sc := n.side.pool.Get().(*userScratch)
	defer n.side.pool.Put(sc)
	return append(dst, n.side.neighbours(self, history, sc)...)
}

// Memoising reports whether the search memoises in a cache.
func (n *UserNeighbourhood) Memoising() bool { return n.side.lists != nil }

// DropMemo stops memoising: a model fitted with a cache that scores live
// histories once fitted need not keep the cache's lists alive. It is not
// safe to call while the search is in use.
func (n *UserNeighbourhood) DropMemo() { n.side.lists = nil }
