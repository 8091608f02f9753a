package recsys

import (
	"math"
	"slices"
)

// Contribution is one term of an item's score: a consumed item j with
// A(i, j) (item side, Thm 4.3) or a neighbour user v with A(u, v) who
// consumed the item (user side, Cor. 4.1), scaled as the score is.
type Contribution struct {
	User   bool
	Index  uint32
	Weight float64
}

// Explainer is implemented by the neighbourhood models: for each item it
// returns the n largest terms of its score for the given live history.
type Explainer interface {
	Explain(history []uint32, items []uint32, n int) [][]Contribution
}

// TopContributions keeps the n largest contributions of cs, best first
// (ties by index), sorting cs in place.
func TopContributions(cs []Contribution, n int) []Contribution {
	slices.SortFunc(cs, func(a, b Contribution) int {
		switch {
		case a.Weight > b.Weight:
			return -1
		case a.Weight < b.Weight:
			return 1
		}
		return int(a.Index) - int(b.Index)
	})
	return cs[:min(n, len(cs))]
}

// ItemContributions lists the terms of an item side's aggsum score of item
// (Thm 4.3): the items j of the history (sorted) in KNN(i), the row item of
// lists, with A(i, j) times scale; nil for an item lists does not hold.
func ItemContributions(lists *Neighbours, history []uint32, item uint32, scale float64) []Contribution {
	if int(item) >= lists.Rows() {
		return nil
	}
	var out []Contribution
	for _, e := range lists.Row(int(item)) {
		if _, ok := slices.BinarySearch(history, e.Index); ok {
			out = append(out, Contribution{Index: e.Index, Weight: scale * e.Value})
		}
	}
	return out
}

// UserContributions lists the terms of a user side's aggsum score of item
// (Cor. 4.1): the neighbours v in nbs, KNN(u) among the users of x, who
// consumed item, with A(u, v) times scale.
func UserContributions(x *Matrix, nbs []Neighbour, item uint32, scale float64) []Contribution {
	var out []Contribution
	for _, nb := range nbs {
		if _, ok := slices.BinarySearch(x.Row(int(nb.Index)), item); ok {
			out = append(out, Contribution{User: true, Index: nb.Index, Weight: scale * nb.Value})
		}
	}
	return out
}

// explain lists the history items in KNN(i) with their affinity times scale.
func (s *itemSide) explain(history []uint32, item uint32, scale float64) []Contribution {
	if int(item) >= s.nItems {
		return nil
	}
	return ItemContributions(s.fwd, history, item, scale)
}

// explain lists the neighbours in nbs who consumed item, with A(u, v) times
// scale.
func (s *userSide) explain(nbs []Neighbour, item uint32, scale float64) []Contribution {
	return UserContributions(s.x, nbs, item, scale)
}

// Explain implements Explainer for item-p models (itemknn, kunn-i, slim).
func (m *ItemP) Explain(history []uint32, items []uint32, n int) [][]Contribution {
	out := make([][]Contribution, len(items))
	for k, i := range items {
		out[k] = TopContributions(m.side.explain(history, i, 1), n)
	}
	return out
}

// Explain implements Explainer for user-p models (userknn, kunn-u).
func (m *UserP) Explain(history []uint32, items []uint32, n int) [][]Contribution {
	nbs := m.Neighbours(-1, history)
	out := make([][]Contribution, len(items))
	for k, i := range items {
		out[k] = TopContributions(m.side.explain(nbs, i, 1), n)
	}
	return out
}

// Explain implements Explainer for KUNN: both sides, scaled as in Eq. (4.4).
func (m *KUNN) Explain(history []uint32, items []uint32, n int) [][]Contribution {
	sc := m.users.pool.Get().(*userScratch)
	nbs := slices.Clone(m.users.neighbours(-1, history, sc))
	m.users.pool.Put(sc)
	cu := knownCount(history, m.items.nItems)
	out := make([][]Contribution, len(items))
	for k, i := range items {
		if cu == 0 {
			continue
		}
		cs := m.items.explain(history, i, 1/math.Sqrt(float64(cu)))
		if int(i) < len(m.itemScale) {
			cs = append(cs, m.users.explain(nbs, i, m.itemScale[i])...)
		}
		out[k] = TopContributions(cs, n)
	}
	return out
}
