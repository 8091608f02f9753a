package recsys

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// Neighbour is one entry of a neighbour list: an index and its similarity
// or affinity.
type Neighbour struct {
	Index uint32
	Value float64
}

// better orders neighbours by decreasing value, ties by ascending index:
// the deterministic KNN order used everywhere in this package.
func (a Neighbour) better(b Neighbour) bool {
	return a.Value > b.Value || (a.Value == b.Value && a.Index < b.Index)
}

// CompareNeighbours compares neighbours in KNN order, by decreasing value
// and ties by ascending index (negative when a comes first), for
// slices.SortFunc.
func CompareNeighbours(a, b Neighbour) int {
	if c := cmp.Compare(b.Value, a.Value); c != 0 {
		return c
	}
	return cmp.Compare(a.Index, b.Index)
}

// Neighbours holds for every row its k_max best neighbours with their values
// in KNN order, stored once so that every k ≤ k_max is a prefix
// (dissertation §4.5.6: O(n·k_max) memory). Only entries with a positive
// value are stored: a neighbour that shares no user (or item) with the row
// adds nothing to any aggsum score (§4.5.5), so dropping it is exact.
//
// A truncation (Truncate) is a view: it shares the entries of the lists
// it was cut from and reads a prefix of each row, so a grid search over k
// holds the k_max lists once, not once per k.
type Neighbours struct {
	ptr []int
	ent []Neighbour
	// rows, when set, holds the lists in place of ptr and ent: lists built
	// in parallel stay where they were written, since copying them into one
	// slice would hold them twice at the copy (fromRows).
	rows [][]Neighbour
	// cut, when set, cuts every row to its first k entries.
	cut bool
	k   int
}

// Rows is the number of rows.
func (nb *Neighbours) Rows() int {
	if nb.rows != nil {
		return len(nb.rows)
	}
	return len(nb.ptr) - 1
}

// Row returns the neighbour list of row r, best first. Do not modify it.
func (nb *Neighbours) Row(r int) []Neighbour {
	var row []Neighbour
	if nb.rows != nil {
		row = nb.rows[r]
	} else {
		row = nb.ent[nb.ptr[r]:nb.ptr[r+1]]
	}
	if nb.cut && len(row) > nb.k {
		row = row[:nb.k]
	}
	return row[:len(row):len(row)] // an append must not reach the next row or past a cut
}

// Len is the total number of entries in the rows.
func (nb *Neighbours) Len() int {
	if !nb.cut && nb.rows == nil {
		return len(nb.ent)
	}
	n := 0
	for r := 0; r < nb.Rows(); r++ {
		n += len(nb.Row(r))
	}
	return n
}

// MaxRow is the length of the longest row.
func (nb *Neighbours) MaxRow() int {
	m := 0
	for r := 0; r < nb.Rows(); r++ {
		m = max(m, len(nb.Row(r)))
	}
	return m
}

// Truncate keeps the first k entries of every row: ktrunc, dissertation
// Algorithm 4.1, applied to lists already in KNN order. The result shares
// nb's entries (Clone copies them out).
func (nb *Neighbours) Truncate(k int) *Neighbours {
	k = max(k, 0)
	if nb.cut {
		k = min(k, nb.k)
	}
	return &Neighbours{ptr: nb.ptr, ent: nb.ent, rows: nb.rows, cut: true, k: k}
}

// Reverse returns, for every column j < nCols, the rows r whose list holds
// j, with the value of that entry, rows ascending. Item-p scoring walks it
// from the user's items: aggsum(φ_item(u,i)) = Σ_{j ∈ O⁺u ∩ KNN(i)} A(i,j)
// (Thm 4.3).
func (nb *Neighbours) Reverse(nCols int) *Neighbours {
	ptr := make([]int, nCols+1)
	for r := 0; r < nb.Rows(); r++ {
		for _, e := range nb.Row(r) {
			ptr[e.Index+1]++
		}
	}
	for c := 0; c < nCols; c++ {
		ptr[c+1] += ptr[c]
	}
	ent := make([]Neighbour, ptr[nCols])
	next := slices.Clone(ptr[:nCols])
	for r := 0; r < nb.Rows(); r++ {
		for _, e := range nb.Row(r) {
			ent[next[e.Index]] = Neighbour{Index: uint32(r), Value: e.Value}
			next[e.Index]++
		}
	}
	return &Neighbours{ptr: ptr, ent: ent}
}

// Clone returns a copy of the lists that shares no memory with nb: the
// caller that made it may change its rows (Row) in place, their values or
// their order, which nb's own rows never allow. A truncation's copy holds
// its prefixes alone.
func (nb *Neighbours) Clone() *Neighbours {
	if !nb.cut && nb.rows == nil {
		return &Neighbours{ptr: slices.Clone(nb.ptr), ent: slices.Clone(nb.ent)}
	}
	out := &Neighbours{ptr: make([]int, 1, nb.Rows()+1), ent: make([]Neighbour, 0, nb.Len())}
	for r := 0; r < nb.Rows(); r++ {
		out.ent = append(out.ent, nb.Row(r)...)
		out.ptr = append(out.ptr, len(out.ent))
	}
	return out
}

// fromRows makes per-row lists one Neighbours value without copying them:
// the caller must not change rows or their lists afterwards.
func fromRows(rows [][]Neighbour) *Neighbours {
	if len(rows) == 0 {
		return &Neighbours{ptr: []int{0}}
	}
	return &Neighbours{rows: rows}
}

// rowArena hands out the storage of one worker's neighbour lists in
// chunks of rowArenaChunk entries, so that a million short lists are not a
// million allocations, each rounded up to its size class.
type rowArena struct{ buf []Neighbour }

const rowArenaChunk = 1 << 16

// keep copies list into the arena and returns the copy, its capacity cut
// to its length.
func (a *rowArena) keep(list []Neighbour) []Neighbour {
	if cap(a.buf)-len(a.buf) < len(list) {
		a.buf = make([]Neighbour, 0, max(rowArenaChunk, len(list)))
	}
	lo := len(a.buf)
	a.buf = append(a.buf, list...)
	return a.buf[lo:len(a.buf):len(a.buf)]
}

// topK keeps the k best neighbours seen so far in a min-heap whose root is
// the worst kept entry.
type topK struct {
	k int
	h []Neighbour
	// floor is r²·c·(1 − 10⁻⁹) once k are kept, r the root's value and c
	// the count offerCosine was given; 0 before (offerCosine).
	floor float64
}

func (t *topK) reset(k int) { t.k, t.h, t.floor = k, t.h[:0], 0 }

// offerCosine pushes row s with the value sum/√(c·cs), c and cs the two
// rows' counts, c the same for every offer until the next reset. A row
// whose value cannot beat the root r (sum² < r²·c·cs) is passed over
// without the square root; the slack leaves every float tie to push.
func (t *topK) offerCosine(s uint32, sum, c, cs float64) {
	if sum*sum >= t.floor*cs { // small enough to inline: most rows stop here
		t.pushCosine(s, sum, c, cs)
	}
}

func (t *topK) pushCosine(s uint32, sum, c, cs float64) {
	t.push(Neighbour{Index: s, Value: sum / math.Sqrt(c*cs)})
	if t.k > 0 && len(t.h) == t.k {
		r := t.h[0].Value
		t.floor = r * r * c * (1 - 1e-9)
	}
}

func (t *topK) push(e Neighbour) {
	if t.k <= 0 {
		return
	}
	if len(t.h) < t.k {
		t.h = append(t.h, e)
		t.up(len(t.h) - 1)
		return
	}
	if !e.better(t.h[0]) {
		return
	}
	t.h[0] = e
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.h[p].better(t.h[i]) {
			return
		}
		t.h[p], t.h[i] = t.h[i], t.h[p]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.h)
	for {
		w := i
		if l := 2*i + 1; l < n && t.h[w].better(t.h[l]) {
			w = l
		}
		if r := 2*i + 2; r < n && t.h[w].better(t.h[r]) {
			w = r
		}
		if w == i {
			return
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// sorted returns the kept entries best first, reusing the heap's storage.
func (t *topK) sorted() []Neighbour {
	slices.SortFunc(t.h, CompareNeighbours)
	return t.h
}

// knn computes, for every row t of fwd, the kmax rows s ≠ t with the highest
//
//	sim(t, s) = Σ_{m ∈ fwd(t) ∩ fwd(s)} w(m) / √(|fwd(t)|·|fwd(s)|)
//
// sparsely, by accumulating co-occurrences through back (the transpose of
// fwd), never forming the dense n×n kernel. With w ≡ 1 this is the cosine
// similarity of §4.3; with w(m) = 1/√c(m) it is the KUNN similarity of
// Eqs. (4.5)–(4.6). Rows are processed in parallel.
func knn(ctx context.Context, fwd, back csr, weight []float64, kmax int, stage string, progress ProgressFunc) (*Neighbours, error) {
	n := fwd.rows()
	rows := make([][]Neighbour, n)
	err := ParallelFor(ctx, n, 64, stage, progress, func() func(lo, hi int) {
		co := coAcc{acc: make([]float64, n), touched: make([]uint32, 0, 1024)}
		var best topK
		var arena rowArena
		return func(lo, hi int) {
			for t := lo; t < hi; t++ {
				entries := 0
				for _, m := range fwd.row(t) {
					entries += back.ptr[m+1] - back.ptr[m]
				}
				dense := entries > n
				for _, m := range fwd.row(t) {
					w := 1.0
					if weight != nil {
						w = weight[m]
					}
					co.add(back.row(int(m)), w, t, dense)
				}
				ct := float64(fwd.ptr[t+1] - fwd.ptr[t])
				rows[t] = arena.keep(co.top(&best, kmax, t, dense, ct, fwd))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return fromRows(rows), nil
}

// coAcc sums, for one row t, its co-occurrences with every other row
// through the columns of t's entries, weighted per column, then keeps the
// best by the cosine-normalised sum: KNN(i) over the item→user→item paths
// (knn) and KNN(u) over user→item→user ones (userSide).
//
// Sparse, it tracks the rows a sum touches and reads those alone; dense,
// it adds every entry without tracking and reads every row once, which is
// cheaper when the columns hold more entries than there are rows (popular
// items reach most users). The sums accumulate in the same order either
// way, and KNN order is total, so both give the same neighbours.
type coAcc struct {
	acc     []float64 // per row; zero between rows
	touched []uint32  // sparse: the rows with a non-zero sum
}

// add adds w (> 0: a zero sum means an untouched row) to the sum of every
// row of col; self's sum is not kept (sparse: skipped, dense: dropped by
// top).
func (a *coAcc) add(col []uint32, w float64, self int, dense bool) {
	if dense {
		for _, s := range col {
			a.acc[s] += w // self's sum is dropped by top
		}
		return
	}
	for _, s := range col {
		if int(s) == self {
			continue
		}
		if a.acc[s] == 0 {
			a.touched = append(a.touched, s)
		}
		a.acc[s] += w
	}
}

// top returns the k best rows s by sum(s)/√(c·counts(s)), c being self's
// count, in KNN order, and clears the sums. The result aliases best.
func (a *coAcc) top(best *topK, k, self int, dense bool, c float64, counts csr) []Neighbour {
	best.reset(k)
	if !dense {
		for _, s := range a.touched {
			best.offerCosine(s, a.acc[s], c, float64(counts.ptr[s+1]-counts.ptr[s]))
			a.acc[s] = 0
		}
		a.touched = a.touched[:0]
		return best.sorted()
	}
	if self >= 0 && self < len(a.acc) {
		a.acc[self] = 0 // KNN is over the other rows
	}
	for s, v := range a.acc {
		if v == 0 {
			continue
		}
		a.acc[s] = 0
		best.offerCosine(uint32(s), v, c, float64(counts.ptr[s+1]-counts.ptr[s]))
	}
	return best.sorted()
}

// kunnWeights returns 1/√c for every count, 0 for empty rows: the diagonal
// W_U of Eq. (4.5) (over users) or W_I of Eq. (4.6) (over items).
func kunnWeights(c csr) []float64 {
	w := make([]float64, c.rows())
	for r := range w {
		if n := c.ptr[r+1] - c.ptr[r]; n > 0 {
			w[r] = 1 / math.Sqrt(float64(n))
		}
	}
	return w
}

// ItemCosineKNN returns the kmax nearest items of every item under the
// cosine similarity (§4.3), the value being sim(i, j).
func ItemCosineKNN(ctx context.Context, x *Matrix, kmax int, progress ProgressFunc) (*Neighbours, error) {
	return knn(ctx, x.byItem, x.byUser, nil, kmax, "item similarity", progress)
}

// ItemKUNNKNN returns the kmax nearest items of every item under the KUNN
// item affinity of Eq. (4.5), which is also the value stored.
func ItemKUNNKNN(ctx context.Context, x *Matrix, kmax int, progress ProgressFunc) (*Neighbours, error) {
	return knn(ctx, x.byItem, x.byUser, kunnWeights(x.byUser), kmax, "item KUNN similarity", progress)
}

// UserCosineKNN returns the kmax nearest users of every training user under
// the cosine similarity (§4.3). Serving computes user neighbours from the
// live history instead (see userSide); this is for analysis and tests.
func UserCosineKNN(ctx context.Context, x *Matrix, kmax int, progress ProgressFunc) (*Neighbours, error) {
	return knn(ctx, x.byUser, x.byItem, nil, kmax, "user similarity", progress)
}
