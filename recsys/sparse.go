package recsys

import (
	"fmt"
	"slices"
)

// Pair is one positive observation, X(u, i) = 1 (dissertation §4.3).
type Pair struct {
	User, Item uint32
}

// csr is a compressed sparse row pattern: the entries of row r are
// idx[ptr[r]:ptr[r+1]], sorted ascending.
type csr struct {
	ptr []int
	idx []uint32
}

func (c csr) row(r int) []uint32 { return c.idx[c.ptr[r]:c.ptr[r+1]] }

func (c csr) rows() int { return len(c.ptr) - 1 }

// Matrix is the binary user×item relevance matrix X of dissertation §4.3,
// stored as CSR (the rows O⁺u) together with its transpose (the columns O⁺i).
// It is immutable after construction and safe for concurrent use.
type Matrix struct {
	nUsers, nItems int
	byUser         csr // row u lists O⁺u
	byItem         csr // row i lists O⁺i
	// days, when not nil, holds the day number of each entry of byUser
	// (NewTimedMatrix), for the time-aware models.
	days []int32
}

// NewMatrix builds X from positive pairs over nUsers users and nItems items.
// Duplicate pairs count once; rows and columns may be empty. It fails when a
// pair is out of range.
func NewMatrix(nUsers, nItems int, pairs []Pair) (*Matrix, error) {
	if nUsers < 0 || nItems < 0 || uint64(nUsers) > 1<<32 || uint64(nItems) > 1<<32 {
		return nil, fmt.Errorf("recsys: bad matrix shape %d×%d", nUsers, nItems)
	}
	counts := make([]int, nUsers+1)
	for _, p := range pairs {
		if int(p.User) >= nUsers || int(p.Item) >= nItems {
			return nil, fmt.Errorf("recsys: pair (%d, %d) outside %d×%d", p.User, p.Item, nUsers, nItems)
		}
		counts[p.User+1]++
	}
	for u := 0; u < nUsers; u++ {
		counts[u+1] += counts[u]
	}
	idx := make([]uint32, len(pairs))
	next := slices.Clone(counts[:nUsers])
	for _, p := range pairs {
		idx[next[p.User]] = p.Item
		next[p.User]++
	}
	// Sort and deduplicate each row, compacting in place.
	ptr := make([]int, nUsers+1)
	w := 0
	for u := 0; u < nUsers; u++ {
		row := idx[counts[u]:counts[u+1]]
		slices.Sort(row)
		for k, it := range row {
			if k > 0 && it == row[k-1] {
				continue
			}
			idx[w] = it
			w++
		}
		ptr[u+1] = w
	}
	byUser := csr{ptr: ptr, idx: slices.Clip(idx[:w])}
	return &Matrix{nUsers: nUsers, nItems: nItems, byUser: byUser, byItem: transpose(byUser, nItems)}, nil
}

// newMatrixCSR wraps an already validated CSR pattern.
func newMatrixCSR(nUsers, nItems int, byUser csr) *Matrix {
	return &Matrix{nUsers: nUsers, nItems: nItems, byUser: byUser, byItem: transpose(byUser, nItems)}
}

// transpose returns the pattern of the transpose; rows come out sorted
// because the source rows are visited in order (a counting sort).
func transpose(a csr, nCols int) csr {
	ptr := make([]int, nCols+1)
	for _, c := range a.idx {
		ptr[c+1]++
	}
	for c := 0; c < nCols; c++ {
		ptr[c+1] += ptr[c]
	}
	idx := make([]uint32, len(a.idx))
	next := slices.Clone(ptr[:nCols])
	for r := 0; r < a.rows(); r++ {
		for _, c := range a.row(r) {
			idx[next[c]] = uint32(r)
			next[c]++
		}
	}
	return csr{ptr: ptr, idx: idx}
}

// Users is |U|, the number of rows.
func (x *Matrix) Users() int { return x.nUsers }

// Items is |I|, the number of columns.
func (x *Matrix) Items() int { return x.nItems }

// NNZ is the number of positive pairs.
func (x *Matrix) NNZ() int { return len(x.byUser.idx) }

// Row returns O⁺u, the items of user u in ascending order. Do not modify it.
func (x *Matrix) Row(u int) []uint32 { return x.byUser.row(u) }

// Col returns O⁺i, the users of item i in ascending order. Do not modify it.
func (x *Matrix) Col(i int) []uint32 { return x.byItem.row(i) }

// UserCount is c(u) = |O⁺u|.
func (x *Matrix) UserCount(u int) int { return x.byUser.ptr[u+1] - x.byUser.ptr[u] }

// ItemCount is c(i) = |O⁺i|.
func (x *Matrix) ItemCount(i int) int { return x.byItem.ptr[i+1] - x.byItem.ptr[i] }

// Popularity returns c(i) for every item: the popularity baseline and the
// tie-breaker of every ranking (§4.7.2, §4.7.3).
func (x *Matrix) Popularity() []uint32 {
	p := make([]uint32, x.nItems)
	for i := range p {
		p[i] = uint32(x.ItemCount(i))
	}
	return p
}

// Pairs lists every positive pair in row order.
func (x *Matrix) Pairs() []Pair {
	out := make([]Pair, 0, x.NNZ())
	for u := 0; u < x.nUsers; u++ {
		for _, i := range x.Row(u) {
			out = append(out, Pair{User: uint32(u), Item: i})
		}
	}
	return out
}
