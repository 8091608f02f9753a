package febr

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/recsys-engine/recsys/recsys"
)

// blendStackUsers bounds the users θ is learnt on: above it, a fixed-seed
// uniform sample of that many (userSample) has a share of its positives
// held out and its blocks stacked, the other users' rows training the
// bases whole. Every user's block holds the scores of its sampled
// negatives (DefaultBlendNegatives) by every base, so stacking every user
// of a large matrix takes gigabytes, while the held-out positives of a
// sample are ample for one weight per base (docs/performance.md,
// "febr-blend's stack"). A variable so that tests can exercise it.
var blendStackUsers = 10_000

// blendStack is the stacking data of a blend fit: the bases fitted on the
// training matrix less a held-out share of every user's positives, and,
// per user, the z-scored base scores of the held-out positives and of a
// uniform sample of the negatives, as OPT-ADG blocks.
type blendStack struct {
	ts    *trainSet
	pairs int
	// posRows[u] and negRows[u] are the rows of user u's block holding
	// its held-out positives and its sampled negatives.
	posRows, negRows [][]int32
	// seen memoises adgSum by θ: the direct search comes back to θ it
	// evaluated (a fifth of its calls on generated data).
	seen *adgMemo
}

// adgMemo is adgSum's results by θ (its bits), for one set of users.
type adgMemo struct {
	mu sync.Mutex
	m  map[string]adgResult
}

type adgResult struct {
	sum float64
	n   int
}

// key is θ's bits as a map key.
func (*adgMemo) key(theta []float64) string {
	b := make([]byte, 0, 8*len(theta))
	for _, v := range theta {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return string(b)
}

func (m *adgMemo) get(theta []float64) (adgResult, bool) {
	if m == nil {
		return adgResult{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.m[m.key(theta)]
	return r, ok
}

func (m *adgMemo) put(theta []float64, r adgResult) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]adgResult{}
	}
	m.m[m.key(theta)] = r
}

// newBlendStack fits the bases on x less the holdout and builds the
// blocks θ is learnt from: the scores of the held-out items come from
// bases that never saw them, as at test time.
func newBlendStack(ctx context.Context, x *recsys.Matrix, names []string, params []recsys.Params, bo BlendOptions, seed uint64) (*blendStack, error) {
	share := bo.Holdout
	if share <= 0 {
		share = DefaultBlendHoldout
	}
	nNeg := negatives(bo)
	var users []int // nil: every user
	if x.Users() > blendStackUsers {
		users = userSample(x.Users(), blendStackUsers)
	}
	ho, err := newHoldout(x, share, seed, nil, users)
	if err != nil {
		return nil, err
	}
	bases, err := fitBases(ctx, ho.x, names, params, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	return blendStackOf(ctx, ho, bases, nNeg, seed)
}

// negatives is bo.Negatives with its default.
func negatives(bo BlendOptions) int {
	if bo.Negatives <= 0 {
		return DefaultBlendNegatives
	}
	return bo.Negatives
}

// heldOut is the holdout of a search on x that takes its positives from
// o.HeldOut (BlendOptions.HeldOut): those of the users without validation
// items in val, at most blendStackUsers of them (a fixed-seed sample, as
// newBlendStack's), with x as the histories. It is nil, and the search
// holds out its own, unless every one of the nb bases was fitted on x.
func (o *BlendOptions) heldOut(x *recsys.Matrix, nb int, val [][]uint32) *holdout {
	if o.HeldOut == nil {
		return nil
	}
	for b := range nb {
		if o.fitted(x, b) == nil {
			return nil
		}
	}
	var users []int
	for u := range min(x.Users(), len(o.HeldOut)) {
		if len(o.HeldOut[u]) > 0 && (u >= len(val) || len(val[u]) == 0) {
			users = append(users, u)
		}
	}
	if len(users) > blendStackUsers {
		keep := userSample(len(users), blendStackUsers)
		for k, at := range keep {
			users[k] = users[at]
		}
		users = users[:len(keep)]
	}
	ho := &holdout{x: x, pos: make([][]uint32, x.Users())}
	for _, u := range users {
		ho.pos[u] = slices.Sorted(slices.Values(o.HeldOut[u]))
	}
	return ho
}

// blendStackOf builds the blocks from bases fitted on ho.x.
func blendStackOf(ctx context.Context, ho *holdout, bases []recsys.Model, nNeg int, seed uint64) (*blendStack, error) {
	x := ho.x
	dim := len(bases)
	ext := &extractor{nItems: x.Items(), dim: dim}
	ts := &trainSet{x: x, ext: ext, pos: ho.pos, zMiss: make([]float64, dim), blocks: make([]block, x.Users()),
		sampled: make([][]uint32, x.Users())}
	st := &blendStack{ts: ts, posRows: make([][]int32, x.Users()), negRows: make([][]int32, x.Users()), seen: &adgMemo{}}
	err := recsys.ParallelFor(ctx, x.Users(), 8, "", nil, func() func(lo, hi int) {
		raw := make([]float64, x.Items())
		mark := make([]bool, x.Items())
		z := make([][]float64, dim)
		for b := range z {
			z[b] = make([]float64, x.Items())
		}
		var cand []uint32
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				hist, pos := x.Row(u), ho.pos[u]
				if len(pos) == 0 {
					continue
				}
				markHistory(mark, hist, true)
				markHistory(mark, pos, true)
				// A uniform sample of the negatives, drawn per user from
				// its own seed so that it does not depend on the schedule.
				rng := rand.New(rand.NewPCG(seed, uint64(u)))
				cand = cand[:0]
				for i := range x.Items() {
					if !mark[i] {
						cand = append(cand, uint32(i))
					}
				}
				if len(cand) > nNeg {
					for k := range nNeg {
						j := k + rng.IntN(len(cand)-k)
						cand[k], cand[j] = cand[j], cand[k]
					}
					cand = cand[:nNeg]
				}
				markHistory(mark, pos, false)
				for b, base := range bases {
					zscoreBase(base, u, hist, mark, raw, z[b])
				}
				markHistory(mark, hist, false)
				blk := &ts.blocks[u]
				blk.items = append(slices.Clone(pos), cand...)
				slices.Sort(blk.items)
				blk.feat = make([]float64, 0, len(blk.items)*dim)
				for _, i := range blk.items {
					for b := range dim {
						blk.feat = append(blk.feat, z[b][i])
					}
				}
				// Every negative OPT-ADG draws comes from the sample.
				ts.sampled[u] = slices.Clone(cand)
				st.posRows[u], st.negRows[u] = blockRows(blk.items, pos)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for u := range x.Users() {
		st.pairs += len(ts.blocks[u].items)
		if len(st.posRows[u]) > 0 && len(st.negRows[u]) > 0 {
			ts.eligible = append(ts.eligible, int32(u))
		}
	}
	return st, nil
}

// adg is the mean ADG of the held-out positives under θ among the
// sampled negatives, the rank scaled to the whole of O⁻u (an unbiased
// estimate of each positive's rank).
func (st *blendStack) adg(ctx context.Context, theta []float64) (float64, error) {
	sum, n, err := st.adgSum(ctx, theta)
	if n == 0 {
		return 0, err
	}
	return sum / float64(n), err
}

// adgSum is adg's sum over the held-out positives and their number. Per
// user the few positives' scores are sorted, every negative finds by
// binary search how many positives it is strictly above, and a suffix sum
// turns those counts into each positive's negatives above it: the
// ascent's hundreds of calls sort a user's few held-out positives instead
// of its sampled negatives (docs/performance.md, "febr-blend's stack").
// A negative that ties a positive counts as half above it, the expected
// count under a random order of the tie: counted as below, a base that
// scores most items 0 (SLIM at a small k) had its held-out positives
// ranked above every tied negative, and a held-out ADG far above its
// validation ADG (docs/evaluation.md "A sparse, wide catalogue").
func (st *blendStack) adgSum(ctx context.Context, theta []float64) (float64, int, error) {
	if r, ok := st.seen.get(theta); ok {
		return r.sum, r.n, nil
	}
	ts := st.ts
	dim := ts.ext.dim
	sums := make([]float64, len(ts.eligible))
	counts := make([]int, len(ts.eligible))
	err := recsys.ParallelFor(ctx, len(ts.eligible), 64, "", nil, func() func(lo, hi int) {
		var (
			pos   []scoredRow // a user's positives, by score
			above []int       // negatives above pos[j-1] alone, then above it
			tied  []int       // negatives tied with pos[j], as differences
			byRow []float64   // negatives above posRows[j], ties as half
			ps    []float64   // pos's scores
		)
		return func(lo, hi int) {
			for k := lo; k < hi; k++ {
				u := int(ts.eligible[k])
				b := &ts.blocks[u]
				posRows, negRows := st.posRows[u], st.negRows[u]
				scale := float64(ts.x.Items()-ts.x.UserCount(u)-len(posRows)) / float64(len(negRows))
				pos = pos[:0]
				for j, q := range posRows {
					pos = append(pos, scoredRow{dot(theta, b.row(int(q), dim)), j})
				}
				slices.SortFunc(pos, func(a, b scoredRow) int { return cmp.Compare(a.score, b.score) })
				ps = ps[:0]
				for _, p := range pos {
					ps = append(ps, p.score)
				}
				above = slices.Grow(above[:0], len(pos)+1)[:len(pos)+1]
				tied = slices.Grow(tied[:0], len(pos)+1)[:len(pos)+1]
				clear(above)
				clear(tied)
				for _, r := range negRows {
					s := dot(theta, b.row(int(r), dim))
					lo := countBelow(ps, s)
					above[lo]++
					if lo < len(ps) && ps[lo] == s {
						// Tied with pos[lo:hi]: a difference array.
						hi := lo + 1
						for hi < len(ps) && ps[hi] == s {
							hi++
						}
						tied[lo]++
						tied[hi]--
					}
				}
				// above[j+1] becomes the negatives above pos[j]: those
				// above more than j positives; tied[j] those tied with it.
				n := 0
				for j := len(pos); j > 0; j-- {
					n += above[j]
					above[j] = n
				}
				for j := 1; j < len(pos); j++ {
					tied[j] += tied[j-1]
				}
				byRow = slices.Grow(byRow[:0], len(pos))[:len(pos)]
				for j := range pos {
					byRow[pos[j].row] = float64(above[j+1]) + 0.5*float64(tied[j])
				}
				// Summed in the positives' own order, as before the sort.
				for _, c := range byRow {
					sums[k] += 1 / math.Log2(scale*c+2)
					counts[k]++
				}
			}
		}
	})
	if err != nil {
		return 0, 0, err
	}
	sum, n := 0.0, 0
	for k := range sums {
		sum += sums[k]
		n += counts[k]
	}
	st.seen.put(theta, adgResult{sum, n})
	return sum, n, nil
}

// countBelow is the number of the ascending scores ps strictly below s: a
// lower bound by halving, written out so that it inlines (adgSum calls it
// for every sampled negative).
func countBelow(ps []float64, s float64) int {
	lo, n := 0, len(ps)
	for n > 0 {
		half := n / 2
		if ps[lo+half] < s {
			lo += half + 1
			n -= half + 1
		} else {
			n = half
		}
	}
	return lo
}

// scoredRow is a positive's score and its index among the user's posRows.
type scoredRow struct {
	score float64
	row   int
}

// heldOut is the number of held-out positives adg averages over.
func (st *blendStack) heldOut() int {
	n := 0
	for _, u := range st.ts.eligible {
		n += len(st.posRows[u])
	}
	return n
}

// on is the stack restricted to the users given (a subset of eligible,
// ascending): OPT-ADG samples and adg averages over them only.
func (st *blendStack) on(users []int32) *blendStack {
	ts := *st.ts
	ts.eligible = users
	out := *st
	out.ts = &ts
	out.seen = &adgMemo{} // other users: other sums
	return &out
}

// blockRows splits the rows of a block into those of the positives pos
// and the rest, the sampled negatives (items and pos sorted, as the
// holdout's positives are).
func blockRows(items, pos []uint32) (posRows, negRows []int32) {
	for q, i := range items {
		if _, ok := slices.BinarySearch(pos, i); ok {
			posRows = append(posRows, int32(q))
		} else {
			negRows = append(negRows, int32(q))
		}
	}
	return posRows, negRows
}
