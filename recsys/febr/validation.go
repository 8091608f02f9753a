package febr

import (
	"context"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// validationADG is the mean ADG (Def. 4.2) over the users with validation
// items of the ranking by θ·z, among the items not in the user's training
// row, ties broken by training popularity: what the offline evaluation
// computes for the model with this θ (val[u] sorted and disjoint from the
// training row). It works on the candidates alone (see blockRanks).
func (ts *trainSet) validationADG(ctx context.Context, theta []float64, val [][]uint32) (float64, error) {
	all, _, err := ts.validationPass(ctx, theta, val, false, false, nil)
	return all, err
}

// validationPass is validationADG over every user with validation items
// (all), and over those whose blocks the memo keeps (kept; all of them
// without streaming). With fill, a streaming set keeps the blocks it
// extracts while they fit in validationMemo and marks the memo
// filled; with memoOnly it ranks the kept users alone (all is then kept).
// With ranks (len ts.x.Users()), ranks[u] is set to the ranks of each user
// u ranked, as RankHeldOut ranks them.
func (ts *trainSet) validationPass(ctx context.Context, theta []float64, val [][]uint32, fill, memoOnly bool, ranks [][]int) (all, kept float64, err error) {
	var users []int
	for u := range min(len(val), ts.x.Users()) {
		if len(val[u]) > 0 && (!memoOnly || ts.keeps(u)) {
			users = append(users, u)
		}
	}
	if len(users) == 0 {
		return 0, 0, ctx.Err()
	}
	sMiss := dot(theta, ts.zMiss)
	per := make([]float64, len(users))
	// rank ranks users[lo:hi], taking each block from the memo or
	// extracting it: into slot(k) when slot is not nil, else into a
	// worker's scratch block.
	rank := func(lo, hi int, slot func(k int) *block) error {
		return recsys.ParallelFor(ctx, hi-lo, 4, "", nil, func() func(a, b int) {
			var (
				own = &block{}
				rk  blockRanker
			)
			return func(a, b int) {
				for k := lo + a; k < lo+b; k++ {
					u := users[k]
					var bl *block
					switch {
					case ts.blocks != nil:
						bl = &ts.blocks[u]
					case ts.valMemo != nil && ts.valMemo[u] != nil:
						bl = ts.valMemo[u]
					default:
						bl = own
						if slot != nil {
							bl = slot(k)
						}
						ts.ext.block(u, ts.x.Row(u), bl)
					}
					r := rk.ranks(bl, ts.ext.dim, theta, sMiss, ts.x.Row(u), val[u], ts.ranker.Positions(), ts.x.Items())
					per[k] = metrics.ADG(r)
					if ranks != nil {
						ranks[u] = slices.Clone(r)
					}
				}
			}
		})
	}
	if !fill || ts.blocks != nil {
		err = rank(0, len(users), nil)
	} else {
		// Filling: the users are ranked a window at a time into the
		// window's blocks (reused from window to window), and those blocks
		// kept in user order while they fit, so that which users the memo
		// keeps does not depend on the schedule (nor, then, early
		// stopping's choice of θ).
		if ts.valMemo == nil {
			ts.valMemo = make([]*block, ts.x.Users())
		}
		const window = 64
		fresh := make([]block, window)
		for lo := 0; lo < len(users) && err == nil; lo += window {
			hi := min(lo+window, len(users))
			if err = rank(lo, hi, func(k int) *block { return &fresh[k-lo] }); err != nil {
				break
			}
			for k := lo; k < hi; k++ {
				b := &fresh[k-lo]
				if ts.keeps(users[k]) {
					continue // ranked from the memo, not extracted
				}
				if n := int64(len(b.items))*4 + int64(len(b.feat))*8; ts.valBytes+n <= validationMemo {
					ts.valMemo[users[k]] = &block{items: slices.Clone(b.items), feat: slices.Clone(b.feat)}
					ts.valBytes += n
				}
			}
		}
		ts.valFilled = err == nil
	}
	if err != nil {
		return 0, 0, err
	}
	sum, sumKept, nKept := 0.0, 0.0, 0
	for k, v := range per {
		sum += v
		if ts.keeps(users[k]) {
			sumKept += v
			nKept++
		}
	}
	all = sum / float64(len(users))
	if nKept == 0 {
		// Not one block fits: early stopping ranks every user.
		return all, all, nil
	}
	return all, sumKept / float64(nKept), nil
}

// keeps reports whether user u's block is at hand without extracting it:
// in the training memo or in the memo of validation blocks.
func (ts *trainSet) keeps(u int) bool {
	return ts.blocks != nil || (ts.valMemo != nil && ts.valMemo[u] != nil)
}

// valMemoAll reports whether the memo keeps every user with validation
// items in val.
func (ts *trainSet) valMemoAll(val [][]uint32) bool {
	for u := range min(len(val), ts.x.Users()) {
		if len(val[u]) > 0 && !ts.keeps(u) {
			return false
		}
	}
	return true
}

// modelValidationADG is the mean ADG of a fitted model over the users with
// validation items, ranked as the offline evaluation ranks them
// (RankHeldOut: the items not in the user's training row, ties broken by
// training popularity).
func modelValidationADG(ctx context.Context, m recsys.Model, x *recsys.Matrix, val [][]uint32) (float64, error) {
	set := make([][]uint32, x.Users())
	copy(set, val)
	ranks, _, err := recsys.RankHeldOut(ctx, m, x, x.Popularity(), [][][]uint32{set}, 0)
	if err != nil {
		return 0, err
	}
	sum, users := 0.0, 0
	for _, r := range ranks[0] {
		if len(r) > 0 {
			sum += metrics.ADG(r)
			users++
		}
	}
	if users == 0 {
		return 0, ctx.Err()
	}
	return sum / float64(users), nil
}
