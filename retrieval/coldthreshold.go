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
// of pairs, and +Inf. A candidate t is scored by the excess consumption of
// the pairs within it,
//
//	E(t) = Σ_{d ≤ t} (c − e),  e = n_u·n_i/N,
//
// c = 1 when the pair was consumed, n_u and n_i the consumed pairs of its
// user and of its item, N all consumed pairs: the consumptions above what
// the users' activity and the items' popularity alone predict (e is the
// expected cell count of a contingency table with those margins). Pairs of
// a user or an item without consumption add nothing, and E(+Inf) = 0.
//
// With t* the candidate of the largest E, the choice is the largest
// candidate whose E is within one standard error of E(t*) (the one-
// standard-error rule of cross-validation), so that a threshold stricter
// than the data need is not chosen on noise, and none (+Inf) unless E(t*)
// exceeds its standard error. The standard error treats the items as the
// sampled units (cold items come one at a time, and an item's pairs rise
// and fall together): √(H/(H−1)·Σ_i (E_i − E/H)²) over the H items of
// pairs, E_i item i's share of E. It returns the threshold and the excess
// per consumed pair of the pairs within it (0 for +Inf).
func ColdThreshold(pairs []ColdPair, grid int) (t, excess float64) {
	nu, ni := map[int]float64{}, map[int]float64{}
	item := map[int]int{} // item → its position among the H items
	n := 0.0
	for _, p := range pairs {
		if _, ok := item[p.Item]; !ok {
			item[p.Item] = len(item)
		}
		if p.Consumed {
			nu[p.User]++
			ni[p.Item]++
			n++
		}
	}
	if n == 0 || grid < 2 || len(item) < 2 {
		return math.Inf(1), 0
	}
	sorted := slices.Clone(pairs)
	slices.SortStableFunc(sorted, func(a, b ColdPair) int { return cmp.Compare(a.Distance, b.Distance) })
	type candidate struct{ t, e, se float64 }
	var cands []candidate
	h := float64(len(item))
	byItem := make([]float64, len(item)) // E_i of the pairs within so far
	e, k := 0.0, 0
	for q := 1; q < grid; q++ {
		d := sorted[(q*len(sorted)+grid-1)/grid-1].Distance
		// Every pair at distance d is within the threshold d.
		for ; k < len(sorted) && sorted[k].Distance <= d; k++ {
			p := sorted[k]
			r := -nu[p.User] * ni[p.Item] / n
			if p.Consumed {
				r++
			}
			byItem[item[p.Item]] += r
			e += r
		}
		v := 0.0
		for _, ei := range byItem {
			v += (ei - e/h) * (ei - e/h)
		}
		cands = append(cands, candidate{d, e, math.Sqrt(h / (h - 1) * v)})
	}
	best := candidate{t: math.Inf(1)}
	for _, c := range cands {
		if c.e > best.e {
			best = c
		}
	}
	// Sums of n residuals agree to within rounding when they are equal.
	floor := best.e - best.se - 1e-9*n
	if math.IsInf(best.t, 1) || floor <= 0 {
		return math.Inf(1), 0
	}
	for _, c := range slices.Backward(cands) {
		if c.e >= floor {
			return c.t, c.e / n
		}
	}
	return best.t, best.e / n
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
