package febr

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/recsys-engine/recsys/recsys"
)

// trainSet is the data of OPT-ADG for one extractor on one matrix x of
// histories: the z-score statistics and, when they fit in the memory
// budget, every user's feature block (the memo of §4.5.6); without the
// memo, blocks are recomputed per user as training visits them. The
// positives OPT-ADG draws are the rows of x (Algorithm 4.2), or held-out
// items disjoint from them (Options.Holdout).
type trainSet struct {
	x      *recsys.Matrix
	ext    *extractor
	pos    [][]uint32 // nil: the rows of x
	zMiss  []float64
	blocks []block // nil when streaming
	// sampled, when set, holds each user's sample of O⁻u, the only
	// negatives OPT-ADG draws; every one has a row in the block.
	sampled [][]uint32
	ranker  *recsys.Ranker
	// eligible are the users with a positive and a negative item: the
	// users OPT-ADG samples.
	eligible []int32
	// candidates is the number of non-missing (u, i) pairs over all users;
	// memoBytes the size of the memo (or what it would have taken).
	candidates int64
	memoBytes  int64
	// valMemo keeps, when streaming, the blocks of the validation users
	// that the first pass of OPT-ADG found room for, up to
	// validationMemo bytes in all (valBytes); valFilled is set once
	// that pass is done. OPT-ADG's early stopping then ranks those users
	// alone (validationPass).
	valMemo   []*block
	valBytes  int64
	valFilled bool
	// pairRows are ext.pairRows() when streaming (OPT-ADG's pairs).
	pairRows *recsys.Neighbours
}

// validationMemo bounds a streaming training set's memo of validation
// blocks (trainSet.valMemo): extracting the validation users' blocks
// again at every evaluation would cost more than the rest of a search
// once the training memo no longer fits (docs/performance.md, "FEBR at
// MovieLens-20M's shape"). A variable so that tests can exercise the
// bound.
var validationMemo int64 = 1 << 30

func (ts *trainSet) positives(u int) []uint32 {
	if ts.pos != nil {
		return ts.pos[u]
	}
	return ts.x.Row(u)
}

// statsUsers is how many users' candidates the z-score statistics are
// computed over: a fixed-seed uniform sample of that many users when there
// are more (a variable so that tests can exercise the sample on small
// data). The statistics only centre and scale the features, and a sample
// of thousands of users makes them means over tens of millions of pairs,
// where a pass over every user of a large matrix costs as much as OPT-ADG
// itself (docs/performance.md, "FEBR at MovieLens-20M's shape"). MovieLens
// 100K (943 users) and Last.fm (1,892) take every user.
var statsUsers = 2000

// drawUsers bounds the users OPT-ADG draws from without the memo: a
// fixed-seed uniform sample of that many when there are more (userSample,
// a superset of the statistics' sample; a variable so that tests can
// exercise it). Drawing u uniformly from a uniform sample of U instead of
// from U (Algorithm 4.2) trains on those users' pairs alone: their
// positives still outnumber the 14 weights of a FEBRiu θ by orders of
// magnitude, and the user side searches KNN(u), O(Σ_{j ∈ O⁺u} c(j)) each,
// for the sample instead of for most of the users (docs/performance.md,
// "FEBR at MovieLens-20M's shape").
var drawUsers = 10_000

// statsSample returns the users the statistics of a matrix of nu users are
// computed over, ascending: all of them, or statsUsers drawn uniformly
// by a fixed-seed generator.
func statsSample(nu int) []int { return userSample(nu, statsUsers) }

// userSample returns n of nu users drawn uniformly by a fixed-seed
// generator, ascending (all of them when nu ≤ n). A partial Fisher–Yates
// shuffle draws them, so a smaller sample is a subset of a larger one.
func userSample(nu, n int) []int {
	all := make([]int, nu)
	for u := range all {
		all[u] = u
	}
	if nu <= n {
		return all
	}
	rng := rand.New(rand.NewPCG(1, 0x57a75))
	for k := range n {
		j := k + rng.IntN(nu-k)
		all[k], all[j] = all[j], all[k]
	}
	return slices.Sorted(slices.Values(all[:n]))
}

// newTrainSet computes the z-score statistics of ext over x from the
// candidates of the users of statsSample and, when they fit in the memory
// budget, keeps every user's block (the memo of §4.5.6), z-scored in place
// once the statistics are known. Without the budget (budget < 0), or when
// the sample's blocks, scaled to all users, would not fit in it, only the
// sample is visited and training computes the features it needs on
// demand. pos, when not nil, are the positives (see trainSet),
// disjoint from the rows of x.
func newTrainSet(ctx context.Context, x *recsys.Matrix, ext *extractor, pos [][]uint32, budget int64, progress recsys.ProgressFunc) (*trainSet, error) {
	ts := &trainSet{x: x, ext: ext, pos: pos, ranker: recsys.NewRanker(x.Popularity(), x.Items())}
	nu := x.Users()
	sample := statsSample(nu)
	inSample := make([]bool, nu)
	for _, u := range sample {
		inSample[u] = true
	}
	perUser := make([]*featureStats, nu)
	counts := make([]int64, nu)
	// pass extracts the users of list, keeping their blocks in blocks
	// (when not nil) while they fit in the budget.
	var used atomic.Int64
	var over atomic.Bool
	pass := func(list []int, blocks []block) error {
		return recsys.ParallelFor(ctx, len(list), 16, "febr features", progress, func() func(lo, hi int) {
			return func(lo, hi int) {
				for _, u := range list[lo:hi] {
					if perUser[u] != nil && blocks == nil {
						continue
					}
					var s *featureStats
					if inSample[u] {
						s = newFeatureStats(ext.dim)
					}
					n := int64(0)
					var b *block
					if blocks != nil && !over.Load() {
						b = &blocks[u]
					}
					ext.extract(u, x.Row(u), func(i uint32, raw []float64) {
						if s != nil {
							s.add(raw)
						}
						n++
						if b != nil {
							b.items = append(b.items, i)
							b.feat = append(b.feat, raw...)
						}
					})
					perUser[u], counts[u] = s, n
					if b != nil {
						b.items, b.feat = slices.Clip(b.items), slices.Clip(b.feat)
						if used.Add(b.bytes()) > budget {
							over.Store(true)
						}
					}
				}
			}
		})
	}
	if err := pass(sample, nil); err != nil {
		return nil, err
	}
	// The memo's size, estimated from the sample.
	sampled := int64(0)
	for _, u := range sample {
		sampled += counts[u]
	}
	estimate := int64(float64(sampled) * float64(nu) / float64(max(1, len(sample))))
	var blocks []block
	if budget >= 0 && estimate*int64(8*ext.dim+4) <= budget {
		blocks = make([]block, nu)
		all := make([]int, nu)
		for u := range all {
			all[u] = u
		}
		if err := pass(all, blocks); err != nil {
			return nil, err
		}
	}
	// Merge in user order so that the statistics do not depend on the
	// schedule.
	total := newFeatureStats(ext.dim)
	for u := range nu {
		if perUser[u] != nil {
			total.merge(perUser[u])
		}
		np := len(ts.positives(u))
		nNeg := x.Items() - x.UserCount(u)
		if pos != nil {
			nNeg -= np
		}
		if np > 0 && nNeg > 0 {
			ts.eligible = append(ts.eligible, int32(u))
		}
	}
	if blocks != nil {
		for u := range nu {
			ts.candidates += counts[u]
		}
	} else {
		ts.candidates = estimate
	}
	ts.memoBytes = ts.candidates * int64(8*ext.dim+4)
	ext.setStats(total.meanStd())
	ts.zMiss = make([]float64, ext.dim)
	ext.zscore(ext.missingRaw(), ts.zMiss)
	if blocks == nil || over.Load() {
		ts.eligible = drawable(ts.eligible, nu)
		ts.pairRows = ext.pairRows()
		return ts, nil
	}
	err := recsys.ParallelFor(ctx, nu, 64, "", nil, func() func(lo, hi int) {
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				f := blocks[u].feat
				for q := 0; q < len(f); q += ext.dim {
					ext.zscore(f[q:q+ext.dim], f[q:q+ext.dim])
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	ts.blocks = blocks
	ts.memoBytes = used.Load()
	return ts, nil
}

// drawable keeps, of the eligible users of a matrix of nu users, those
// of userSample(nu, drawUsers): the users OPT-ADG draws from without
// the memo.
func drawable(eligible []int32, nu int) []int32 {
	if nu <= drawUsers {
		return eligible
	}
	in := make([]bool, nu)
	for _, u := range userSample(nu, drawUsers) {
		in[u] = true
	}
	return slices.DeleteFunc(eligible, func(u int32) bool { return !in[u] })
}
