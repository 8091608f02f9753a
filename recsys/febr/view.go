package febr

import (
	"cmp"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
)

// view is one user's side of the pair features φ(u, i), from which
// extractor.pair computes the features of single items on demand
// instead of the user's whole block: the history as a bitset and, for the
// user side, KNN(u). OPT-ADG looks at a few items of a drawn user, and a
// block costs as much as the user's candidates, a large share of the
// catalogue.
//
// The user side is accumulated when the view is prepared, for the items
// the step will look at alone (lookAt: its positive and the negatives it
// may draw, drawn ahead), over the rows of KNN(u) in its order as extract
// does: views are prepared in parallel, while OPT-ADG's steps run
// serially, and a pair's user side looked up there costs one read instead
// of a binary search in each of the k neighbours' rows. Accumulating
// every item of those rows instead would cost the whole rows for the few
// items a step looks at (docs/performance.md, "FEBR at MovieLens-20M's
// shape").
type view struct {
	hist    []uint64 // the history, a bit per item
	ex      []uint64 // the items OPT-ADG does not draw as negatives: hist and the held-out positives
	self    int      // the row of the training matrix the view is of (extract's self)
	nbs     []recsys.Neighbour
	look    []uint64 // the items the user side is accumulated for
	users   []aggOf  // per item, O⁺i ∩ KNN(u) accumulated; zero outside touched
	touched []uint32 // the items with a non-zero entry in users
	// The step's draws, made with the view (optADG): the positive i⁺
	// and, in order, the negatives it may look at.
	pos  uint32
	negs []uint32
}

func setBit(b []uint64, i uint32) { b[i/64] |= 1 << (i % 64) }

func hasBit(b []uint64, i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// grow resizes a scratch slice to n zeroed entries.
func grow[E any](v []E, n int) []E {
	v = slices.Grow(v[:0], n)[:n]
	clear(v)
	return v
}

// view prepares v for the user with the given history (sorted, deduplicated,
// items < nItems), row self of the training matrix as in extract, and
// also excluding the items of extra from the negatives: the bitsets.
// lookAt then finds KNN(u) and accumulates the user side of the items a
// step looks at (not needed with the memo).
func (e *extractor) view(v *view, self int, history, extra []uint32) {
	words := (e.nItems + 63) / 64
	v.hist, v.ex = grow(v.hist, words), grow(v.ex, words)
	for _, i := range history {
		setBit(v.hist, i)
		setBit(v.ex, i)
	}
	for _, i := range extra {
		setBit(v.ex, i)
	}
	v.nbs = v.nbs[:0]
	for _, i := range v.touched {
		v.users[i] = aggOf{}
	}
	v.touched = v.touched[:0]
	v.self = self
}

// lookAt finds KNN(u) of the view's user (history as given to view) and
// accumulates its user side for the items its step looks at (v.pos and
// v.negs; repeats allowed), as extract does for them (Cor. 4.1: item i's
// active users are the neighbours whose rows hold it, in the order of
// KNN(u)); pair may then be asked for these items alone. Once per view.
func (e *extractor) lookAt(v *view, history []uint32) {
	if e.users == nil {
		return
	}
	v.nbs = e.users.AppendNeighbours(v.nbs, v.self, history)
	v.look = grow(v.look, (e.nItems+63)/64)
	setBit(v.look, v.pos)
	for _, i := range v.negs {
		setBit(v.look, i)
	}
	if len(v.users) != e.nItems {
		v.users = make([]aggOf, e.nItems)
	}
	for _, nb := range v.nbs {
		for _, i := range e.users.Matrix().Row(int(nb.Index)) {
			if !hasBit(v.look, i) {
				continue
			}
			if v.users[i].n == 0 {
				v.touched = append(v.touched, i)
			}
			v.users[i].add(nb.Value)
		}
	}
}

// pair writes the raw features φ(u, i) of the view's user into raw and
// reports whether any is not missing: what extract gives for i, to the
// bit (the item side accumulates O⁺u ∩ KNN(i) in item order as the
// reversed lists do, the user side KNN(u) in its order). byIndex is
// e.pairRows(): KNN(i) in item order.
func (e *extractor) pair(v *view, byIndex *recsys.Neighbours, i uint32, raw []float64) bool {
	found := false
	off := 0
	if e.items != nil {
		var a aggOf
		for _, nb := range byIndex.Row(int(i)) {
			if hasBit(v.hist, nb.Index) {
				a.add(nb.Value)
			}
		}
		a.write(e.k, raw[:featuresPerSide])
		found = a.n > 0
		off = featuresPerSide
	}
	if e.users != nil {
		a := &v.users[i]
		a.write(e.k, raw[off:off+featuresPerSide])
		found = found || a.n > 0
	}
	return found
}

// pairRows returns the item side's KNN(i) lists with each row in item
// order (nil for FEBRu), for pair: the entries of O⁺u ∩ KNN(i) then come
// in the order extract accumulates them, without a sort per pair.
func (e *extractor) pairRows() *recsys.Neighbours {
	if e.items == nil {
		return nil
	}
	out := e.items.fwd.Clone()
	for r := range out.Rows() {
		slices.SortFunc(out.Row(r), func(a, b recsys.Neighbour) int { return cmp.Compare(a.Index, b.Index) })
	}
	return out
}
