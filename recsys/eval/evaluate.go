package eval

import (
	"context"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// perUser calls fn with every measure of each user with at least one
// held-out item; n for a user is the number of items not in its history
// (its training row, or live[u] when live is not nil and live[u] is not).
func perUser(ranks [][]int, train *recsys.Matrix, live [][]uint32, fn func(metrics.Values)) {
	for u, r := range ranks {
		if len(r) == 0 {
			continue
		}
		seen := train.UserCount(u)
		if live != nil && live[u] != nil {
			seen = len(live[u])
		}
		fn(metrics.All(r, train.Items()-seen))
	}
}

// meanValues averages every measure over the users with at least one
// held-out item (perUser) and counts them.
func meanValues(ranks [][]int, train *recsys.Matrix, live [][]uint32) (metrics.Values, int) {
	var sum metrics.Values
	users := 0
	perUser(ranks, train, live, func(v metrics.Values) {
		for k := range sum {
			sum[k] += v[k]
		}
		users++
	})
	if users > 0 {
		for k := range sum {
			sum[k] /= float64(users)
		}
	}
	return sum, users
}

// userSE is the standard error of the mean of every measure over the users
// with held-out items (meanSE over perUser).
func userSE(ranks [][]int, train *recsys.Matrix, live [][]uint32) metrics.Values {
	var per [len(metrics.Names)][]float64
	perUser(ranks, train, live, func(v metrics.Values) {
		for k := range per {
			per[k] = append(per[k], v[k])
		}
	})
	var out metrics.Values
	for k := range per {
		_, out[k] = meanSE(per[k])
	}
	return out
}

// Evaluate ranks the held-out items of every user (per user, sorted, not
// in the user's training row) with a model fitted on train and returns the
// mean of every measure over the users with held-out items, ties broken by
// training popularity. It is the validation step of a hyper-parameter
// search.
func Evaluate(ctx context.Context, m recsys.Model, train *recsys.Matrix, heldOut [][]uint32) (metrics.Values, error) {
	return evaluateLive(ctx, m, train, nil, heldOut)
}

// evaluateLive is Evaluate with the users of live (when not nil) scored
// from their live histories (recsys.RankHeldOutLive).
func evaluateLive(ctx context.Context, m recsys.Model, train *recsys.Matrix, live, heldOut [][]uint32) (metrics.Values, error) {
	ranks, _, err := recsys.RankHeldOutLive(ctx, m, train, live, train.Popularity(), [][][]uint32{heldOut}, 0)
	if err != nil {
		return metrics.Values{}, err
	}
	v, _ := meanValues(ranks[0], train, live)
	return v, nil
}
