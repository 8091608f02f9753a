package retrieval

import (
	"cmp"
	"math"
	"slices"
)

// ColdPair is one pair of a cold-start validation: a user, an item held out
// as if it were cold, the item's squared distance to the user's history
// under the metric, and whether the user consumed the item.
type ColdPair struct {
	User, Item int
	Distance   float64
	Consumed   bool
}

// ColdThreshold chooses the largest squared distance from a user's history
// at which a cold item still earns a slot (docs/design.md#cold-start). The
// candidates are the distances at the quantiles 1/grid, …, (grid−1)/grid
// of pairs, and +Inf; the choice maximises the excess consumption of the
// pairs within the threshold,
//
//	E(t) = Σ_{d ≤ t} (c − n_u·n_i/N),
//
// c = 1 when the pair was consumed, n_u and n_i the consumed pairs of its
// user and of its item, N all consumed pairs: the consumptions above what
// the users' activity and the items' popularity alone predict (the
// expected cell count of a contingency table with those margins). Pairs of
// a user or an item without consumption add nothing, and E(+Inf) = 0: a
// threshold is chosen only where the nearer pairs were consumed more than
// their margins predict. Ties go to the larger threshold. It returns +Inf
// and 0 when no candidate has a positive excess, and the excess per
// consumed pair of the chosen threshold otherwise.
func ColdThreshold(pairs []ColdPair, grid int) (t, excess float64) {
	nu, ni := map[int]float64{}, map[int]float64{}
	n := 0.0
	for _, p := range pairs {
		if p.Consumed {
			nu[p.User]++
			ni[p.Item]++
			n++
		}
	}
	if n == 0 || grid < 2 {
		return math.Inf(1), 0
	}
	sorted := slices.Clone(pairs)
	slices.SortStableFunc(sorted, func(a, b ColdPair) int { return cmp.Compare(a.Distance, b.Distance) })
	within := make([]float64, len(sorted)+1) // within[k]: E of the k nearest pairs
	for k, p := range sorted {
		r := -nu[p.User] * ni[p.Item] / n
		if p.Consumed {
			r++
		}
		within[k+1] = within[k] + r
	}
	// Sums of n residuals agree to within rounding when they are equal.
	tol := 1e-9 * n
	t, best, chosen := math.Inf(1), 0.0, 0.0
	for q := 1; q < grid; q++ {
		d := sorted[(q*len(sorted)+grid-1)/grid-1].Distance
		// Every pair at distance d is within the threshold d.
		k, _ := slices.BinarySearchFunc(sorted, d, func(p ColdPair, d float64) int {
			if p.Distance <= d {
				return -1
			}
			return 1
		})
		if e := within[k]; e > tol && e >= best-tol {
			t, best, chosen = d, max(best, e), e
		}
	}
	return t, chosen / n
}

// Spread is the mean squared distance between two projected vectors drawn
// independently from vecs, 2·mean‖p − p̄‖²: the scale of a metric on a
// catalogue, by which a threshold chosen under one fit of the metric
// carries over to another fit on the same items.
func Spread(vecs [][]float64) float64 {
	if len(vecs) == 0 {
		return 0
	}
	mean := make([]float64, len(vecs[0]))
	for _, v := range vecs {
		for k, x := range v {
			mean[k] += x
		}
	}
	for k := range mean {
		mean[k] /= float64(len(vecs))
	}
	s := 0.0
	for _, v := range vecs {
		s += SqDist(v, mean)
	}
	return 2 * s / float64(len(vecs))
}
