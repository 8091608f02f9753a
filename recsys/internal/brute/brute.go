// Package brute computes the long way, over dense 0/1 matrices, the
// similarities and scores that recsys and its sub-packages compute
// sparsely: the references their tests compare against. It imports none
// of them, so the tests inside package recsys can use it too.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
package brute

import (
	"cmp"
	"math"
	"slices"
)

// Neighbour is one entry of a neighbour list: an index and its similarity.
type Neighbour struct {
	Index uint32
	Value float64
}

// KNN picks the k best j ≠ self with a positive similarity sim[j], in KNN
// order (decreasing similarity, ties by ascending index).
func KNN(sim []float64, self, k int) []Neighbour {
	var all []Neighbour
	for j, s := range sim {
		if j != self && s > 0 {
			all = append(all, Neighbour{Index: uint32(j), Value: s})
		}
	}
	slices.SortFunc(all, func(a, b Neighbour) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return all[:min(k, len(all))]
}

// UserP scores a live history h with user-p: KNN(h) among the training
// users of d other than self by cosine (or Eq. 4.6), summing A(h, v) over
// the neighbours that hold i.
func UserP(d [][]bool, h []bool, self, k int, kunn bool) []float64 {
	m, n := len(d), len(d[0])
	sim := make([]float64, m)
	for v := range m {
		if kunn {
			sim[v] = KUNNUserSim(d, h, v)
			continue
		}
		co, ch, cv := 0, 0, 0
		for j := range n {
			if h[j] {
				ch++
			}
			if d[v][j] {
				cv++
			}
			if h[j] && d[v][j] {
				co++
			}
		}
		if co > 0 {
			sim[v] = float64(co) / math.Sqrt(float64(ch)*float64(cv))
		}
	}
	out := make([]float64, n)
	for _, e := range KNN(sim, self, k) {
		for i := range n {
			if d[e.Index][i] {
				out[i] += e.Value
			}
		}
	}
	return out
}

// KUNNItemSim is Eq. (4.5) computed directly: ~iᵀ W_U ~j / (‖i‖‖j‖).
func KUNNItemSim(d [][]bool, i, j int) float64 {
	cu, ci := RowCounts(d), ColCounts(d)
	if ci[i] == 0 || ci[j] == 0 {
		return 0
	}
	s := 0.0
	for v := range d {
		if d[v][i] && d[v][j] {
			s += 1 / math.Sqrt(float64(cu[v]))
		}
	}
	return s / math.Sqrt(float64(ci[i])*float64(ci[j]))
}

// KUNNUserSim is Eq. (4.6) computed directly for a history h against
// training user v.
func KUNNUserSim(d [][]bool, h []bool, v int) float64 {
	ci, cu := ColCounts(d), RowCounts(d)
	ch := 0
	s := 0.0
	for j, b := range h {
		if b {
			ch++
			if d[v][j] {
				s += 1 / math.Sqrt(float64(ci[j]))
			}
		}
	}
	if ch == 0 || cu[v] == 0 {
		return 0
	}
	return s / math.Sqrt(float64(ch)*float64(cu[v]))
}

// ColCounts is c(i), the count of every column of d.
func ColCounts(d [][]bool) []int {
	c := make([]int, len(d[0]))
	for _, row := range d {
		for i, b := range row {
			if b {
				c[i]++
			}
		}
	}
	return c
}

// RowCounts is c(u), the count of every row of d.
func RowCounts(d [][]bool) []int {
	c := make([]int, len(d))
	for u, row := range d {
		for _, b := range row {
			if b {
				c[u]++
			}
		}
	}
	return c
}
