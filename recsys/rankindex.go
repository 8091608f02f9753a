package recsys

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// TopRanker is implemented by models that find a user's best items
// without scoring the whole catalogue. RankTop(history, pop, skip, n,
// scores) returns exactly what
//
//	m.Score(history, scores); scores[i] = −Inf where skip(i); TopN(scores, pop, nil, n)
//
// returns, the same items in the same order, and leaves in scores[i] the
// same score for every returned item i (the other entries of scores are
// unspecified). The catalogue is 0..len(scores)−1.
type TopRanker interface {
	RankTop(history []uint32, popularity []uint32, skip func(uint32) bool, n int, scores []float64) []uint32
}

// AsTopRanker returns m as a TopRanker when it finds its top n without
// scoring every item. A model whose RankTop would only score every item
// (the dense EASE) says so by a ranksTop method reporting false; the
// caller then scores and selects itself, filtering only the items it
// knows to filter instead of asking about each one.
func AsTopRanker(m Model) (TopRanker, bool) {
	r, ok := m.(TopRanker)
	if !ok {
		return nil, false
	}
	if d, ok := m.(interface{ ranksTop() bool }); ok && !d.ranksTop() {
		return nil, false
	}
	return r, true
}

// scoreTop is RankTop by scoring every item, for a TopRanker that cannot
// use its index (a catalogue shorter than the model's, a dense model).
func scoreTop(m Model, history []uint32, popularity []uint32, skip func(uint32) bool, n int, scores []float64) []uint32 {
	m.Score(history, scores)
	for i := range scores {
		if skip(uint32(i)) {
			scores[i] = math.Inf(-1)
		}
	}
	return TopN(scores, popularity, nil, n)
}

// rankBlocks caps the number of blocks of a rankIndex, and rankMinBlock
// is the fewest items a block holds: every row keeps one bound per block,
// so the bounds take at most 4·rankBlocks bytes per item, and a query adds
// |H|·rankBlocks of them.
const (
	rankBlocks   = 128
	rankMinBlock = 64
	rankLead     = 8
	// rankSparse: a query whose history's reversed rows hold at most
	// nItems/rankSparse entries scores the items they reach alone
	// (sparseTop) instead of pushing whole blocks through the heap.
	rankSparse = 8
)

// rankIndex holds the reversed lists of an item-item affinity A (row j:
// the items i with j ∈ KNN(i), and A(i, j)) laid out so that a top-n
// query can skip most of the catalogue and still return the exact answer.
//
// Items get positions in decreasing order of their row sum Σ_j A(i, j) (a
// bound on any of their scores; of the positive entries alone when some
// are negative) and are grouped in at most rankBlocks blocks of
// consecutive positions; every reversed row is sorted by position. For a
// history H, each block has the bound
// ub(b) = Σ_{j∈H} max(0, max_{i∈b} A(i, j)), added in ascending j, which
// is at least the
// score of every item of the block as the full scorer computes it: that
// score adds the A(i, j) ≤ max terms in the same order, and rounded
// addition is monotone (the maxima are kept as float32 rounded up, still
// ≥ every term). A query scores the blocks exactly in decreasing order of
// bound and stops at the first block whose bound is below the n-th best
// score found, so it returns the same items and the same scores as
// scoring every item.
//
// A block's bound costs a look-up per history item, so a query computes
// them lazily: blocks are in decreasing order of their static bound (the
// largest row sum of their items, bound below), which caps the bound of
// every block not yet looked at, and a block's bound is computed only
// while that cap is at least the best bound already known and the n-th
// best score found. With scores that follow row sums, the first few
// blocks settle the answer and the rest are never looked at. Bounds are
// computed in two steps, each reading a stretch of every history item's
// row of maxima: the first rankLead blocks, then, only if the next
// block's static bound still reaches both, all the others.
type rankIndex struct {
	nItems int
	order  []uint32 // position → item
	pos    []uint32 // item → position
	ptr    []int    // row j is ent[ptr[j]:ptr[j+1]]
	ent    []rankEntry
	shift  uint // a block holds 1<<shift consecutive positions
	// bmax[j·nBlocks+b] is max(0, max_{i∈b} A(i, j)), rounded up to a float32,
	// and row j's entries in block b are row(j)[boff[j·(nBlocks+1)+b]:
	// boff[j·(nBlocks+1)+b+1]].
	bmax []float32
	boff []uint32
	// bound[b] caps the score of every item of block b: the largest row
	// sum of its items, raised to cover rounding (see newRankIndex). It
	// does not increase with b, as items are placed by decreasing row sum.
	bound []float64
	pool  sync.Pool // *rankScratch
	once  sync.Once // bmax and boff built (blocks)
	// negative is set when some entry is below 0 (EASE's weights).
	negative bool
}

// rankEntry is one entry A(item, j) of reversed row j.
type rankEntry struct {
	item  uint32
	pos   uint32
	value float64
}

type rankScratch struct {
	seen    []uint64 // sparse: a bit per item, set while it is in touched
	touched []uint32 // sparse: the items the history's rows reach
	rest    []bool   // blocks left to the one pass
	hist    []uint32
	ub      []float64
	pending []blockBound // bounds computed, blocks not yet scored: ascending ub
	heap    []uint32
}

type blockBound struct {
	ub float64
	b  int32
}

func (x *rankIndex) nBlocks() int { return (x.nItems + 1<<x.shift - 1) >> x.shift }

// block is the block of position p.
func (x *rankIndex) block(p uint32) int { return int(p >> x.shift) }

// span is the positions of block b.
func (x *rankIndex) span(b int) (lo, hi uint32) {
	return uint32(b << x.shift), uint32(min((b+1)<<x.shift, x.nItems))
}

// roundUp32 is the least float32 at least v.
func roundUp32(v float64) float32 {
	f := float32(v)
	if float64(f) < v {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// newRankIndex builds the index of the affinity whose KNN lists are fwd
// (row i: j ∈ KNN(i) with A(i, j)) over nItems items. The entries may be
// negative (EASE's weights): an item's row sum is then that of its
// positive entries, the most its score can reach, and a block's maximum
// for row j is at least 0, the term of an item without j in its list.
func newRankIndex(nItems int, fwd *Neighbours) *rankIndex {
	x := &rankIndex{nItems: nItems, order: make([]uint32, nItems), pos: make([]uint32, nItems)}
	rowSum := make([]float64, nItems)
	for i := 0; i < min(nItems, fwd.Rows()); i++ {
		for _, e := range fwd.Row(i) {
			rowSum[i] += max(0, e.Value)
		}
	}
	for i := range x.order {
		x.order[i] = uint32(i)
	}
	slices.SortFunc(x.order, func(a, b uint32) int {
		if c := cmp.Compare(rowSum[b], rowSum[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for p, i := range x.order {
		x.pos[i] = uint32(p)
	}
	// Counting sort by row j, filled in position order of i, so every row
	// comes out sorted by position.
	x.ptr = make([]int, nItems+1)
	for i := 0; i < min(nItems, fwd.Rows()); i++ {
		for _, e := range fwd.Row(i) {
			x.ptr[e.Index+1]++
		}
	}
	for j := 0; j < nItems; j++ {
		x.ptr[j+1] += x.ptr[j]
	}
	x.ent = make([]rankEntry, x.ptr[nItems])
	next := slices.Clone(x.ptr[:nItems])
	for p, i := range x.order {
		if int(i) >= fwd.Rows() {
			continue
		}
		for _, e := range fwd.Row(int(i)) {
			x.ent[next[e.Index]] = rankEntry{item: i, pos: uint32(p), value: e.Value}
			x.negative = x.negative || e.Value < 0
			next[e.Index]++
		}
	}
	for x.shift = 0; 1<<x.shift < rankMinBlock || (nItems+1<<x.shift-1)>>x.shift > rankBlocks; x.shift++ {
	}
	nb := x.nBlocks()
	// A score adds some of the item's row entries. Rounded, each partial
	// sum stays below the sum P of the positive entries added so far
	// times (1+2⁻⁵³) per addition: a negative term lowers the exact sum,
	// and rounding is monotone. With the rounding of rowSum itself, the
	// bound is off by at most a relative 2·nItems·2⁻⁵³, which the 1e-8
	// margin covers for catalogues up to 10⁷ items; as items are placed by
	// decreasing rowSum, the bounds do not increase from block to block.
	x.bound = make([]float64, nb)
	for p, i := range x.order {
		b := x.block(uint32(p))
		x.bound[b] = max(x.bound[b], rowSum[i]*(1+1e-8))
	}
	x.pool.New = func() any { return &rankScratch{rest: make([]bool, nb), ub: make([]float64, nb)} }
	return x
}

// blocks builds the per-row block maxima and offsets (bmax, boff) on the
// first top-n query that needs them, or at prepare: a fit scored by
// validation alone (accumulate) never does, and at a million items they
// take 8·rankBlocks bytes per item.
func (x *rankIndex) blocks() {
	x.once.Do(func() {
		nItems, nb := x.nItems, x.nBlocks()
		x.bmax = make([]float32, nItems*nb)
		x.boff = make([]uint32, nItems*(nb+1))
		for j := 0; j < nItems; j++ {
			m, off := x.bmax[j*nb:][:nb], x.boff[j*(nb+1):][:nb+1]
			for _, e := range x.row(uint32(j)) {
				b := x.block(e.pos)
				m[b] = max(m[b], roundUp32(e.value))
				off[b+1]++
			}
			for b := range nb {
				off[b+1] += off[b]
			}
		}
	})
}

// prepare builds what queries build lazily (blocks), for a model about to
// serve.
func (x *rankIndex) prepare() { x.blocks() }

// scoreRest scores the items of the given blocks (not yet scored) in one
// pass over the history's rows, each item's terms added in ascending j as
// the full scorer adds them.
func (x *rankIndex) scoreRest(sc *rankScratch, blocks []blockBound, scores []float64) {
	clear(sc.rest)
	for _, bb := range blocks {
		if bb.b < 0 {
			continue
		}
		sc.rest[bb.b] = true
		lo, hi := x.span(int(bb.b))
		for p := lo; p < hi; p++ {
			scores[x.order[p]] = 0
		}
	}
	for _, j := range sc.hist {
		for _, e := range x.row(j) {
			if sc.rest[e.pos>>x.shift] {
				scores[e.item] += e.value
			}
		}
	}
}

// row returns reversed row j.
func (x *rankIndex) row(j uint32) []rankEntry { return x.ent[x.ptr[j]:x.ptr[j+1]] }

// accumulate adds scale·A(i, j) to scores[i] for every j of history and i
// with j ∈ KNN(i), as itemSide.accumulate does from its reversed lists.
func (x *rankIndex) accumulate(history []uint32, scores []float64, scale float64) int {
	known := 0
	prev := -1
	for _, j := range history {
		if int(j) >= x.nItems || int(j) == prev {
			continue
		}
		prev = int(j)
		known++
		for _, e := range x.row(j) {
			scores[e.item] += scale * e.value
		}
	}
	return known
}

// topN is RankTop for the affinity score Σ_{j∈H∩KNN(i)} A(i, j) (scale 1;
// ItemP's score), on a catalogue of len(scores) ≥ nItems items.
func (x *rankIndex) topN(history []uint32, popularity []uint32, skip func(uint32) bool, n int, scores []float64) []uint32 {
	if n <= 0 {
		return nil
	}
	sc := x.pool.Get().(*rankScratch)
	defer x.pool.Put(sc)
	full := x.history(sc, history)
	nb := x.nBlocks()
	// Items past the model's catalogue score 0: one more block, bound 0.
	pending := sc.pending[:0]
	if len(scores) > x.nItems {
		pending = append(pending, blockBound{ub: 0, b: -1})
	}
	next := 0 // blocks next.. have no bound computed; x.bound[next] caps theirs

	q := topHeap{t: tieOrder{pop: popularity}, scores: scores, n: n, h: sc.heap[:0]}
	push := func(item uint32) {
		if q.enters(item) && !skip(item) {
			q.push(item)
		}
	}
	// pushBlock offers the items of block b (−1: those past the model's
	// catalogue, which score 0), whose scores are set.
	pushBlock := func(b int32) {
		if b < 0 {
			for i := x.nItems; i < len(scores); i++ {
				scores[i] = 0
				push(uint32(i))
			}
			return
		}
		lo, hi := x.span(int(b))
		for p := lo; p < hi; p++ {
			push(x.order[p])
		}
	}
	// Scoring one block costs a look-up per history item plus its
	// entries; when the bounds do not prune (items whose scores do not
	// follow their row sums), the blocks left are scored in one pass over
	// the history's rows, as the full scorer does, so that a query costs
	// at most about 1.125 times a full scoring.
	if full <= x.nItems/rankSparse {
		if top, ok := x.sparseTop(sc, popularity, skip, n, scores); ok {
			return top
		}
	}
	perBlock := 4*len(sc.hist) + full/max(1, nb)
	spent := 0
	for {
		// Compute bounds while an unseen block may beat the best known
		// and the n-th best score found.
		for next < nb && (len(pending) == 0 || x.bound[next] >= pending[len(pending)-1].ub) &&
			!(q.full() && x.bound[next] < scores[q.h[0]]) {
			to := nb
			if next == 0 {
				to = min(nb, rankLead)
			}
			pending = x.rangeBounds(sc, next, to, pending)
			next = to
		}
		if len(pending) == 0 {
			break
		}
		// bb's bound is at least every other pending block's, and the
		// blocks not looked at are below it or below the n-th best score.
		bb := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		// An item of this block scores at most bb.ub: below the n-th best
		// score found, it cannot enter, nor can any other block's left.
		if q.full() && bb.ub < scores[q.h[0]] {
			break
		}
		if bb.b >= 0 {
			if spent += perBlock; spent > full/8 {
				// The rest in one pass: every block left, in decreasing
				// order of bound.
				if next < nb {
					pending = x.rangeBounds(sc, next, nb, pending)
					next = nb
				}
				rest := append(pending, bb)
				slices.SortFunc(rest, func(a, b blockBound) int { return cmp.Compare(b.ub, a.ub) })
				x.scoreRest(sc, rest, scores)
				for _, bb := range rest {
					if q.full() && bb.ub < scores[q.h[0]] {
						break
					}
					pushBlock(bb.b)
				}
				pending = rest
				break
			}
			x.scoreBlock(sc, int(bb.b), scores)
		}
		pushBlock(bb.b)
	}
	sc.pending = pending
	top := q.sorted()
	sc.heap = top
	return slices.Clone(top)
}

// sparseTop is topN when the history's reversed rows hold few entries
// against the catalogue (a million items, short lists): it scores the
// items those rows reach, in one pass adding each item's terms in the
// order of the history as the full scorer does, and selects among them.
// Every other item scores 0, so when at least n of the reached items pass
// skip with a positive score they are the answer, in the same order and
// with the same scores as scoring every item; otherwise ok is false and
// the blocks answer. skip is asked only of items that would enter the top
// n found so far.
func (x *rankIndex) sparseTop(sc *rankScratch, popularity []uint32, skip func(uint32) bool, n int, scores []float64) (_ []uint32, ok bool) {
	touched := x.reach(sc, scores, sc.touched[:0])
	q := topHeap{t: tieOrder{pop: popularity}, scores: scores, n: n, h: sc.heap[:0]}
	// The filter is asked only of items that would enter the heap: the
	// heap ends full exactly when n reached items pass it with a positive
	// score, as every item kept passed it and none is refused while the
	// heap has room.
	for _, i := range touched {
		if scores[i] > 0 && q.enters(i) && !skip(i) {
			q.push(i)
		}
	}
	sc.touched = touched
	full := q.full()
	top := q.sorted()
	sc.heap = top
	if !full {
		return nil, false
	}
	return slices.Clone(top), true
}

// reach appends to touched the items that the reversed rows of sc.hist
// reach, each once, and sets their scores: the terms added in the order
// of the history, as the full scorer adds them. Every other item's score
// is 0 and is left as it was in scores.
func (x *rankIndex) reach(sc *rankScratch, scores []float64, touched []uint32) []uint32 {
	if len(sc.seen) < (x.nItems+63)/64 {
		sc.seen = make([]uint64, (x.nItems+63)/64)
	}
	for _, j := range sc.hist {
		for _, e := range x.row(j) {
			if w, b := e.item/64, uint64(1)<<(e.item%64); sc.seen[w]&b == 0 {
				sc.seen[w] |= b
				touched = append(touched, e.item)
				scores[e.item] = 0
			}
		}
	}
	for _, j := range sc.hist {
		for _, e := range x.row(j) {
			scores[e.item] += e.value
		}
	}
	for _, i := range touched {
		sc.seen[i/64] = 0
	}
	return touched
}

// history sets sc.hist to the items of history the index knows, repeats
// next to each other dropped, as the full scorer reads them, and returns
// the number of reversed entries they hold.
func (x *rankIndex) history(sc *rankScratch, history []uint32) int {
	sc.hist = sc.hist[:0]
	prev, full := -1, 0
	for _, j := range history {
		if int(j) < x.nItems && int(j) != prev {
			sc.hist = append(sc.hist, j)
			prev = int(j)
			full += x.ptr[j+1] - x.ptr[j]
		}
	}
	return full
}

// scoreSparse is SparseScorer.ScoreSparse for the affinity score (scale
// 1): when every entry is non-negative and the history's rows hold few
// entries against the catalogue, the items they reach, scored.
func (x *rankIndex) scoreSparse(history []uint32, scores []float64, touched []uint32) ([]uint32, bool) {
	if x.negative || len(scores) < x.nItems {
		return touched, false
	}
	sc := x.pool.Get().(*rankScratch)
	defer x.pool.Put(sc)
	if x.history(sc, history) > x.nItems/rankSparse {
		return touched, false
	}
	return x.reach(sc, scores, touched[:0]), true
}

// rangeBounds adds to pending the bounds of blocks from..to−1, each
// Σ_{j∈hist} max_{i∈b} A(i, j) added in the order of hist as the scorer
// adds an item's terms (capped by the block's static bound), and returns
// it in ascending order of bound.
func (x *rankIndex) rangeBounds(sc *rankScratch, from, to int, pending []blockBound) []blockBound {
	x.blocks()
	nb := x.nBlocks()
	ub := sc.ub[from:to]
	clear(ub)
	for _, j := range sc.hist {
		for k, v := range x.bmax[int(j)*nb+from : int(j)*nb+to] {
			ub[k] += float64(v)
		}
	}
	for k, u := range ub {
		pending = append(pending, blockBound{ub: min(u, x.bound[from+k]), b: int32(from + k)})
	}
	slices.SortFunc(pending, func(a, b blockBound) int { return cmp.Compare(a.ub, b.ub) })
	return pending
}

// scoreBlock sets the exact scores of the items of block b: each item's
// terms added in ascending j, as the full scorer adds them.
func (x *rankIndex) scoreBlock(sc *rankScratch, b int, scores []float64) {
	x.blocks()
	lo, hi := x.span(b)
	for p := lo; p < hi; p++ {
		scores[x.order[p]] = 0
	}
	nb1 := len(sc.ub) + 1
	for _, j := range sc.hist {
		off := x.boff[int(j)*nb1+b:]
		for _, e := range x.row(j)[off[0]:off[1]] {
			scores[e.item] += e.value
		}
	}
}
