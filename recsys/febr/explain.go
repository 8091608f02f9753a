package febr

import (
	"github.com/recsys-engine/recsys/recsys"
)

// Explain implements recsys.Explainer: the active items j ∈ O⁺u ∩ KNN(i) and
// active users v ∈ O⁺i ∩ KNN(u) of each item, weighted by the part of the
// score that is linear in their affinity, A·(θ_sum/σ_sum +
// θ_mean/(|active|·σ_mean)) per side (aggmin, aggmax and aggstd are not
// sums over the active set and are left out).
func (m *Model) Explain(history []uint32, items []uint32, n int) [][]recsys.Contribution {
	var nbs []recsys.Neighbour
	if u := m.ext.users; u != nil {
		nbs = u.AppendNeighbours(nil, -1, history)
	}
	out := make([][]recsys.Contribution, len(items))
	for k, i := range items {
		if int(i) >= m.ext.nItems {
			continue
		}
		var cs []recsys.Contribution
		off := 0
		if m.ext.items != nil {
			side := recsys.ItemContributions(m.ext.items.fwd, history, i, 1)
			m.weigh(side, off)
			cs = append(cs, side...)
			off += featuresPerSide
		}
		if m.ext.users != nil {
			side := recsys.UserContributions(m.ext.users.Matrix(), nbs, i, 1)
			m.weigh(side, off)
			cs = append(cs, side...)
		}
		out[k] = recsys.TopContributions(cs, n)
	}
	return out
}

// weigh scales the affinities of one side's active set (features at off)
// by the linear part of the score.
func (m *Model) weigh(cs []recsys.Contribution, off int) {
	if len(cs) == 0 {
		return
	}
	std := m.ext.std
	w := m.theta[off+aggSum]/std[off+aggSum] + m.theta[off+aggMean]/(float64(len(cs))*std[off+aggMean])
	for k := range cs {
		cs[k].Weight *= w
	}
}
