// Package rank holds what the retrieval learners share: the supervision
// (relevant sets X⁺q, dissertation §3.2), the ranking measures of seed 002 §4
// and dissertation §3.5, and the PSD helpers on gonum matrices.
//
// Works cited in the comments are listed in docs/references.md.
package rank

import (
	"errors"
	"fmt"
	"slices"
)

// Supervision says which training items are relevant to each training query
// q: X⁺q. Every other item except q itself is irrelevant, X⁻q (dissertation
// §3.2). It is built either from class labels (same class = relevant) or from
// a neighbour graph (X⁺q = the item's neighbours, e.g. its collaborative
// k-nearest neighbours), and is read-only once built.
type Supervision struct {
	n int
	// labels, when non-nil: x is relevant to q iff labels[x] == labels[q];
	// members[c] lists the items of class c (including the query).
	labels  []int
	members [][]int32
	// pos, when labels is nil: sorted, deduplicated neighbour lists without
	// the item itself.
	pos [][]int32
}

// FromLabels builds label supervision: items of the same class are mutually
// relevant. Labels are small non-negative class indices.
func FromLabels(labels []int) (*Supervision, error) {
	s := &Supervision{n: len(labels), labels: slices.Clone(labels)}
	for i, c := range labels {
		if c < 0 {
			return nil, fmt.Errorf("rank: negative label %d at item %d", c, i)
		}
		for len(s.members) <= c {
			s.members = append(s.members, nil)
		}
		s.members[c] = append(s.members[c], int32(i))
	}
	return s, nil
}

// FromNeighbours builds graph supervision over n items: lists[q] are the
// items relevant to q (dense indices in [0,n)). The item itself and
// duplicates are dropped; an empty list means q is never used as a query.
func FromNeighbours(n int, lists [][]int) (*Supervision, error) {
	if len(lists) > n {
		return nil, fmt.Errorf("rank: %d neighbour lists for %d items", len(lists), n)
	}
	s := &Supervision{n: n, pos: make([][]int32, n)}
	for q, l := range lists {
		p := make([]int32, 0, len(l))
		for _, x := range l {
			if x < 0 || x >= n {
				return nil, fmt.Errorf("rank: neighbour %d of item %d out of range [0,%d)", x, q, n)
			}
			if x != q {
				p = append(p, int32(x))
			}
		}
		slices.Sort(p)
		s.pos[q] = slices.Compact(p)
	}
	return s, nil
}

// Len is the number of items.
func (s *Supervision) Len() int { return s.n }

// Labels returns the class labels, or nil for graph supervision.
func (s *Supervision) Labels() []int { return s.labels }

// Relevant returns X⁺q as a shared, read-only slice. For label supervision it
// holds q itself, which callers skip.
func (s *Supervision) Relevant(q int) []int32 {
	if s.labels != nil {
		return s.members[s.labels[q]]
	}
	return s.pos[q]
}

// IsRelevant reports whether x ∈ X⁺q (never true for x == q).
func (s *Supervision) IsRelevant(q, x int) bool {
	if x == q {
		return false
	}
	if s.labels != nil {
		return s.labels[x] == s.labels[q]
	}
	_, ok := slices.BinarySearch(s.pos[q], int32(x))
	return ok
}

// NumRelevant is |X⁺q|.
func (s *Supervision) NumRelevant(q int) int {
	if s.labels != nil {
		return len(s.members[s.labels[q]]) - 1
	}
	return len(s.pos[q])
}

// NumIrrelevant is |X⁻q| = n − 1 − |X⁺q|.
func (s *Supervision) NumIrrelevant(q int) int { return s.n - 1 - s.NumRelevant(q) }

// Queries lists the items usable as training queries: those with at least
// one relevant and one irrelevant item.
func (s *Supervision) Queries() []int {
	var qs []int
	for q := 0; q < s.n; q++ {
		if s.NumRelevant(q) > 0 && s.NumIrrelevant(q) > 0 {
			qs = append(qs, q)
		}
	}
	return qs
}

// Subset restricts the supervision to the items idx, renumbered 0..len-1 in
// that order; relevant items outside idx are dropped.
func (s *Supervision) Subset(idx []int) (*Supervision, error) {
	if s.labels != nil {
		l := make([]int, len(idx))
		for i, x := range idx {
			l[i] = s.labels[x]
		}
		return FromLabels(l)
	}
	where := make(map[int]int, len(idx))
	for i, x := range idx {
		if x < 0 || x >= s.n {
			return nil, errors.New("rank: subset index out of range")
		}
		where[x] = i
	}
	lists := make([][]int, len(idx))
	for i, x := range idx {
		for _, y := range s.pos[x] {
			if j, ok := where[int(y)]; ok {
				lists[i] = append(lists[i], j)
			}
		}
	}
	return FromNeighbours(len(idx), lists)
}
