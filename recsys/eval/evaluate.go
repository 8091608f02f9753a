package eval

import (
	"context"

	"recsys/recsys"
	"recsys/recsys/metrics"
)

// scored is one item of a user's top-N list.
type scored struct {
	item  uint32
	score float64
}

// rankSets scores every user with held-out items (or every user when top >
// 0) from the user's training row, in parallel over users, and returns for
// each set the ranks of its items (Def. 4.1, among the items not in the
// user's training row, ties broken by training popularity) and, when top >
// 0, each user's top-N list.
func rankSets(ctx context.Context, m recsys.Model, train *recsys.Matrix, pop []uint32, sets [][][]uint32, top int) ([][][]int, [][]scored, error) {
	nu, ni := train.Users(), train.Items()
	ranks := make([][][]int, len(sets))
	for s := range sets {
		ranks[s] = make([][]int, nu)
	}
	var tops [][]scored
	if top > 0 {
		tops = make([][]scored, nu)
	}
	ranker := recsys.NewRanker(pop, ni)
	err := recsys.ParallelFor(ctx, nu, 16, "", nil, func() func(lo, hi int) {
		scores := make([]float64, ni)
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				need := top > 0
				for _, set := range sets {
					need = need || len(set[u]) > 0
				}
				if !need {
					continue
				}
				history := train.Row(u)
				recsys.ScoreUser(m, u, history, scores)
				for s, set := range sets {
					if len(set[u]) > 0 {
						ranks[s][u] = ranker.Ranks(scores, history, set[u])
					}
				}
				if top > 0 {
					best := recsys.TopN(scores, pop, history, top)
					list := make([]scored, len(best))
					for k, i := range best {
						list[k] = scored{item: i, score: scores[i]}
					}
					tops[u] = list
				}
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return ranks, tops, nil
}

// meanValues averages every measure over the users with at least one
// held-out item; n for a user is the number of items not in its training
// row.
func meanValues(ranks [][]int, train *recsys.Matrix) (metrics.Values, int) {
	var sum metrics.Values
	users := 0
	for u, r := range ranks {
		if len(r) == 0 {
			continue
		}
		v := metrics.All(r, train.Items()-train.UserCount(u))
		for k := range sum {
			sum[k] += v[k]
		}
		users++
	}
	if users > 0 {
		for k := range sum {
			sum[k] /= float64(users)
		}
	}
	return sum, users
}

// Evaluate ranks the held-out items of every user (per user, sorted, not
// in the user's training row) with a model fitted on train and returns the
// mean of every measure over the users with held-out items, ties broken by
// training popularity. It is the validation step of a hyper-parameter
// search.
func Evaluate(ctx context.Context, m recsys.Model, train *recsys.Matrix, heldOut [][]uint32) (metrics.Values, error) {
	ranks, _, err := rankSets(ctx, m, train, train.Popularity(), [][][]uint32{heldOut}, 0)
	if err != nil {
		return metrics.Values{}, err
	}
	v, _ := meanValues(ranks[0], train)
	return v, nil
}
