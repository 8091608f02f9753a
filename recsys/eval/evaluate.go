package eval

import (
	"context"

	"recsys/recsys"
	"recsys/recsys/metrics"
)

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
	ranks, _, err := recsys.RankHeldOut(ctx, m, train, train.Popularity(), [][][]uint32{heldOut}, 0)
	if err != nil {
		return metrics.Values{}, err
	}
	v, _ := meanValues(ranks[0], train)
	return v, nil
}
