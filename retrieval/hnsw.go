package retrieval

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

// HNSWOptions configure an approximate index. Zero values take defaults.
type HNSWOptions struct {
	// M is the number of links per node on the upper layers (default 16);
	// layer 0 keeps 2M.
	M int
	// EfConstruction is the candidate list size while inserting (default
	// 100).
	EfConstruction int
	// EfSearch is the candidate list size of a query, raised to k when k is
	// larger (default 64).
	EfSearch int
	// Seed makes the layer assignment reproducible, and with Workers ≤ 1
	// the whole graph.
	Seed uint64
	// Workers is the number of goroutines that insert at once (default 1:
	// sequential, the same graph for the same Seed). With more, each node's
	// links are guarded by a lock of their own and the graph depends on
	// the goroutines' timing; its recall does not.
	Workers int
}

func (o *HNSWOptions) defaults() {
	if o.M <= 1 {
		o.M = 16
	}
	if o.EfConstruction <= 0 {
		o.EfConstruction = 100
	}
	if o.EfSearch <= 0 {
		o.EfSearch = 64
	}
	o.Workers = max(o.Workers, 1)
}

// HNSW is an approximate k-nearest-neighbour index over projected vectors:
// a hierarchical navigable small-world graph (Malkov and Yashunin 2018,
// "Efficient and robust approximate nearest neighbor search using
// Hierarchical Navigable Small World graphs", Alg. 1–5). Ids are dense,
// 0..Len()-1, like Index. It is built once (BuildHNSW) and then read-only:
// any number of searches may run concurrently. Recall against the exact
// Index is measured by TestHNSW_recall and BenchmarkSimilar.
//
// The links live in two flat arrays, one row per node and layer, each row
// its link count followed by its slots: layer 0 (2M slots) for every
// node, and the upper layers (M slots) of the nodes that reach them, found
// through upper. Levels are drawn before the first insert, so both arrays
// are allocated once.
type HNSW struct {
	opt  HNSWOptions
	dim  int
	data []float64 // row-major n×dim, shared with the Index it was built from
	// v32 is data in float32, what the graph is built and searched on:
	// half the memory to read per distance, which at a million items is
	// the cost of a build. Search answers with float64 distances.
	v32   []float32
	n     int
	m0    int
	l0    []int32 // node i's layer-0 row: l0[i*(m0+1)], the count, then m0 slots
	upper []int32 // upper[i] is the start of node i's rows in up (−1: level 0)
	up    []int32 // rows of M+1 for layers 1..level of each node, in node order
	level []uint8
	entry int32
	top   int
	// locks guard each node's rows while a parallel build runs; nil once
	// built, when the graph is read-only.
	locks   []sync.Mutex
	entryMu sync.Mutex // guards entry and top during a parallel build
	scratch sync.Pool  // *scratch, one per concurrent search or insert
}

// scratch is the reusable state of one search or insert: the visited
// marks (a generation counter, so clearing is one increment) and the
// buffers of the candidate heaps and neighbour selection.
type scratch struct {
	mark    []uint32
	gen     uint32
	cands   []cand // min-heap by distance
	found   []cand // max-heap by distance
	ep      []cand
	q32     []float32
	kept    []cand
	dropped []cand
	shrink  []cand
	nb      []cand
	links   []int32
}

func (s *scratch) next(n int) {
	if len(s.mark) < n {
		s.mark = make([]uint32, n)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 { // wrapped: clear
		clear(s.mark)
		s.gen = 1
	}
}

// BuildHNSW indexes the vectors of ix (which must not change afterwards:
// the graph shares its storage). With opt.Workers ≤ 1 insertion is
// sequential and deterministic for a given Seed.
func BuildHNSW(ix *Index, opt HNSWOptions) (*HNSW, error) {
	opt.defaults()
	ix.mu.RLock()
	data, n, dim := ix.data, ix.len(), ix.dim
	ix.mu.RUnlock()
	if n == 0 || dim == 0 {
		return nil, fmt.Errorf("retrieval: HNSW over an empty index")
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("retrieval: HNSW holds at most %d items", math.MaxInt32)
	}
	m0 := 2 * opt.M
	h := &HNSW{opt: opt, dim: dim, data: data, n: n, m0: m0, v32: make([]float32, n*dim),
		l0: make([]int32, n*(m0+1)), upper: make([]int32, n), level: make([]uint8, n)}
	for k, x := range data[:n*dim] {
		h.v32[k] = float32(x)
	}
	h.scratch.New = func() any { return &scratch{} }
	rng := rand.New(rand.NewPCG(opt.Seed, 0x4a5b))
	ml := 1 / math.Log(float64(opt.M)) // level multiplier m_L = 1/ln M (Malkov and Yashunin 2018 §4.1)
	rows := 0
	for i := range n {
		h.upper[i] = -1
		if i == 0 {
			continue // the first node is the entry point at level 0
		}
		l := min(int(math.Floor(-math.Log(1-rng.Float64())*ml)), 30)
		h.level[i] = uint8(l)
		if l > 0 {
			h.upper[i] = int32(rows * (opt.M + 1))
			rows += l
		}
	}
	h.up = make([]int32, rows*(opt.M+1))
	if opt.Workers == 1 || n < 2*opt.Workers {
		s := h.scratch.Get().(*scratch)
		for i := 1; i < n; i++ {
			h.insert(int32(i), s)
		}
		h.scratch.Put(s)
		return h, nil
	}
	h.locks = make([]sync.Mutex, n)
	var next atomic.Int64
	next.Store(1)
	var wg sync.WaitGroup
	for range opt.Workers {
		wg.Go(func() {
			s := h.scratch.Get().(*scratch)
			defer h.scratch.Put(s)
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				h.insert(int32(i), s)
			}
		})
	}
	wg.Wait()
	h.locks = nil
	return h, nil
}

// Len is the number of items.
func (h *HNSW) Len() int { return h.n }

// Dim is the vector dimension.
func (h *HNSW) Dim() int { return h.dim }

func (h *HNSW) vec(i int32) []float64 {
	return h.data[int(i)*h.dim : (int(i)+1)*h.dim : (int(i)+1)*h.dim]
}

func (h *HNSW) vec32(i int32) []float32 {
	return h.v32[int(i)*h.dim : (int(i)+1)*h.dim : (int(i)+1)*h.dim]
}

// dist is the squared distance as Index.search sums it (SquaredDistance),
// so both indexes report bit-identical distances.
func (h *HNSW) dist(q []float64, i int32) float64 { return SquaredDistance(q, h.vec(i)) }

// dist32 is the squared distance in float32, the graph's measure.
func (h *HNSW) dist32(q []float32, i int32) float32 { return within32(q, h.vec32(i), math.MaxFloat32) }

// within32 is ‖q − row‖² in float32 when that is at most bound, and
// otherwise some partial sum above bound: it stops summing, four
// coordinates at a time, once the sum passes bound.
func within32(q, row []float32, bound float32) float32 {
	row = row[:len(q)] // one bounds check, and the loops need none
	var d float32
	for len(q) >= 4 && len(row) >= 4 {
		a, b, c, e := q[0]-row[0], q[1]-row[1], q[2]-row[2], q[3]-row[3]
		if d += a*a + b*b + c*c + e*e; d > bound {
			return d
		}
		q, row = q[4:], row[4:]
	}
	for j, v := range q {
		t := v - row[j]
		d += t * t
	}
	return d
}

// row is node i's row of layer l: its count, then its slots.
func (h *HNSW) row(i int32, l int) []int32 {
	if l == 0 {
		o := int(i) * (h.m0 + 1)
		return h.l0[o : o+h.m0+1 : o+h.m0+1]
	}
	o := int(h.upper[i]) + (l-1)*(h.opt.M+1)
	return h.up[o : o+h.opt.M+1 : o+h.opt.M+1]
}

// links are node i's links on layer l, read-only: during a parallel build
// they are copied into buf under the node's lock.
func (h *HNSW) links(i int32, l int, buf []int32) []int32 {
	r := h.row(i, l)
	if h.locks == nil {
		return r[1 : 1+r[0]]
	}
	h.locks[i].Lock()
	buf = append(buf[:0], r[1:1+r[0]]...)
	h.locks[i].Unlock()
	return buf
}

func setRow(r []int32, nb []cand) {
	r[0] = int32(len(nb))
	for k, c := range nb {
		r[1+k] = c.id
	}
}

func (h *HNSW) lock(i int32) {
	if h.locks != nil {
		h.locks[i].Lock()
	}
}

func (h *HNSW) unlock(i int32) {
	if h.locks != nil {
		h.locks[i].Unlock()
	}
}

// insert adds node q at its drawn level (Malkov and Yashunin 2018, Alg. 1).
func (h *HNSW) insert(q int32, s *scratch) {
	l := int(h.level[q])
	x := h.vec32(q)
	if h.locks != nil {
		h.entryMu.Lock()
	}
	entry, top := h.entry, h.top
	if h.locks != nil {
		if l > top {
			// A new top level: other inserts wait until q is linked and
			// has become the entry point (rare: about log_M n times).
			defer h.entryMu.Unlock()
		} else {
			h.entryMu.Unlock()
		}
	}
	s.ep = append(s.ep[:0], cand{id: entry, d: h.dist32(x, entry)})
	for lc := top; lc > l; lc-- {
		s.ep = append(s.ep[:0], h.searchLayer(x, s.ep, 1, lc, s)...)
	}
	for lc := min(l, top); lc >= 0; lc-- {
		w := h.searchLayer(x, s.ep, h.opt.EfConstruction, lc, s)
		s.ep = append(s.ep[:0], w...)
		mmax := h.opt.M
		if lc == 0 {
			mmax = h.m0
		}
		// Linking reuses s.kept: the neighbours are copied out first.
		s.nb = append(s.nb[:0], h.selectNeighbours(s.ep, h.opt.M, s)...)
		h.lock(q)
		setRow(h.row(q, lc), s.nb)
		h.unlock(q)
		for _, c := range s.nb {
			h.link(c.id, q, c.d, lc, mmax, s)
		}
	}
	if l > top {
		h.top, h.entry = l, q
	}
}

// link adds q (at distance d) to e's links on layer l, shrinking them back
// to mmax with the heuristic when full.
func (h *HNSW) link(e, q int32, d float32, l, mmax int, s *scratch) {
	h.lock(e)
	defer h.unlock(e)
	r := h.row(e, l)
	n := int(r[0])
	if n < mmax {
		r[1+n] = q
		r[0]++
		return
	}
	ve := h.vec32(e)
	s.shrink = s.shrink[:0]
	for _, o := range r[1 : 1+n] {
		s.shrink = append(s.shrink, cand{id: o, d: h.dist32(ve, o)})
	}
	s.shrink = append(s.shrink, cand{id: q, d: d})
	sortCands(s.shrink)
	setRow(r, h.selectNeighbours(s.shrink, mmax, s))
}

// selectNeighbours is the heuristic of Malkov and Yashunin 2018, Alg. 4
// (without extending the candidates): scanning candidates by increasing
// distance, keep c unless it is closer to an already kept neighbour than
// to the base point; fill up with the discarded ones when fewer than m
// survive. cs is sorted; the result is in s.kept, sorted.
func (h *HNSW) selectNeighbours(cs []cand, m int, s *scratch) []cand {
	if len(cs) <= m {
		return cs
	}
	kept, dropped := s.kept[:0], s.dropped[:0]
	for _, c := range cs {
		if len(kept) == m {
			break
		}
		vc := h.vec32(c.id)
		good := true
		for _, r := range kept {
			if within32(vc, h.vec32(r.id), c.d) < c.d {
				good = false
				break
			}
		}
		if good {
			kept = append(kept, c)
		} else {
			dropped = append(dropped, c)
		}
	}
	for _, c := range dropped {
		if len(kept) == m {
			break
		}
		kept = append(kept, c)
	}
	sortCands(kept)
	s.kept, s.dropped = kept, dropped
	return kept
}

// cand is a node with its distance to the query.
type cand struct {
	id int32
	d  float32
}

func compareCands(a, b cand) int {
	if a.d != b.d {
		return cmp.Compare(a.d, b.d)
	}
	return cmp.Compare(a.id, b.id)
}

func sortCands(cs []cand) { slices.SortFunc(cs, compareCands) }

func compareNeighbours(a, b Neighbour) int {
	if a.Distance != b.Distance {
		return cmp.Compare(a.Distance, b.Distance)
	}
	return cmp.Compare(a.ID, b.ID)
}

// The candidate heaps are written out rather than through container/heap,
// whose interface boxes every pushed value: a build pushes hundreds of
// candidates per insert. less orders a min-heap by distance; a max-heap
// passes the reverse.

func heapUp(h []cand, j int, less func(a, b float32) bool) {
	for j > 0 {
		p := (j - 1) / 2
		if !less(h[j].d, h[p].d) {
			break
		}
		h[p], h[j] = h[j], h[p]
		j = p
	}
}

func heapDown(h []cand, i int, less func(a, b float32) bool) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && less(h[r].d, h[l].d) {
			j = r
		}
		if !less(h[j].d, h[i].d) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func heapPush(h []cand, c cand, less func(a, b float32) bool) []cand {
	h = append(h, c)
	heapUp(h, len(h)-1, less)
	return h
}

func heapPop(h []cand, less func(a, b float32) bool) (cand, []cand) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	heapDown(h, 0, less)
	return top, h
}

func nearer(a, b float32) bool  { return a < b }
func farther(a, b float32) bool { return a > b }

// searchLayer is Malkov and Yashunin 2018, Alg. 2: a best-first search of
// layer l from the entry points ep keeping the ef nearest found; it returns
// them sorted, in s.found (valid until s's next search).
func (h *HNSW) searchLayer(q []float32, ep []cand, ef, l int, s *scratch) []cand {
	s.next(h.n)
	cands, found := s.cands[:0], s.found[:0]
	for _, e := range ep {
		s.mark[e.id] = s.gen
		cands = heapPush(cands, e, nearer)
		found = heapPush(found, e, farther)
	}
	for len(found) > ef {
		_, found = heapPop(found, farther)
	}
	for len(cands) > 0 {
		var c cand
		c, cands = heapPop(cands, nearer)
		if len(found) >= ef && c.d > found[0].d {
			break
		}
		s.links = h.links(c.id, l, s.links)
		for _, e := range s.links {
			if s.mark[e] == s.gen {
				continue
			}
			s.mark[e] = s.gen
			var d float32
			if len(found) < ef {
				d = h.dist32(q, e)
			} else if d = within32(q, h.vec32(e), found[0].d); d >= found[0].d {
				continue
			}
			cands = heapPush(cands, cand{id: e, d: d}, nearer)
			found = heapPush(found, cand{id: e, d: d}, farther)
			if len(found) > ef {
				_, found = heapPop(found, farther)
			}
		}
	}
	sortCands(found)
	s.cands, s.found = cands, found
	return found
}

// maxFilteredEf caps the widening of a filtered search before it gives up
// on the graph and scans exactly.
const maxFilteredEf = 4096

// Search returns about the k nearest items to q (Malkov and Yashunin 2018,
// Alg. 5), in increasing distance, skipping ids exclude rejects and the id
// self (−1 for none). When exclusions leave fewer than k results the
// candidate list is widened
// (doubling ef up to maxFilteredEf); if that still falls short, the whole
// index is scanned exactly, so a heavily filtered query (e.g. cold items
// only) is slow but never silently short.
func (h *HNSW) Search(q []float64, k int, exclude func(id int) bool) []Neighbour {
	return h.search(q, k, exclude, -1)
}

// SearchID is Search by the stored vector of item id, which is left out.
func (h *HNSW) SearchID(id, k int, exclude func(id int) bool) []Neighbour {
	if id < 0 || id >= h.n {
		return nil
	}
	return h.search(h.vec(int32(id)), k, exclude, id)
}

func (h *HNSW) search(q []float64, k int, exclude func(int) bool, self int) []Neighbour {
	if len(q) != h.dim || k <= 0 {
		return nil
	}
	avail := h.n // items a search can return at most
	if self >= 0 {
		avail--
	}
	want := min(k, avail)
	s := h.scratch.Get().(*scratch)
	defer h.scratch.Put(s)
	s.q32 = s.q32[:0]
	for _, x := range q {
		s.q32 = append(s.q32, float32(x))
	}
	s.ep = append(s.ep[:0], cand{id: h.entry, d: h.dist32(s.q32, h.entry)})
	for lc := h.top; lc > 0; lc-- {
		s.ep = append(s.ep[:0], h.searchLayer(s.q32, s.ep, 1, lc, s)...)
	}
	for ef := max(h.opt.EfSearch, k); ; ef *= 2 {
		w := h.searchLayer(s.q32, s.ep, ef, 0, s)
		// The candidates are ranked again by their float64 distances,
		// the exact index's, before the first k are taken.
		out := make([]Neighbour, 0, len(w))
		for _, c := range w {
			id := int(c.id)
			if id == self || exclude != nil && exclude(id) {
				continue
			}
			out = append(out, Neighbour{ID: id, Distance: h.dist(q, c.id)})
		}
		if len(out) >= want {
			slices.SortFunc(out, compareNeighbours)
			return out[:want]
		}
		if ef >= h.n || ef >= maxFilteredEf {
			// Exclusions left too few, or the graph does not reach
			// every item: scan.
			return h.exact(q, k, exclude, self)
		}
	}
}

// exact scans every item (the fallback of a heavily filtered search).
func (h *HNSW) exact(q []float64, k int, exclude func(int) bool, self int) []Neighbour {
	ix := &Index{dim: h.dim, data: h.data[:h.n*h.dim]}
	return ix.search(q, k, exclude, self)
}
