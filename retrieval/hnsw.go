package retrieval

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
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
	// Seed makes the layer assignment, and so the graph, reproducible.
	Seed uint64
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
}

// HNSW is an approximate k-nearest-neighbour index over projected vectors:
// a hierarchical navigable small-world graph (Malkov and Yashunin 2018,
// "Efficient and robust approximate nearest neighbor search using
// Hierarchical Navigable Small World graphs", Alg. 1–5). Ids are dense,
// 0..Len()-1, like Index. It is built once (BuildHNSW) and then read-only:
// any number of searches may run concurrently. Recall against the exact
// Index is measured by TestHNSW_recall and BenchmarkSimilar.
type HNSW struct {
	opt    HNSWOptions
	dim    int
	data   []float64 // row-major n×dim, shared with the Index it was built from
	n      int
	l0     []int32 // layer-0 links: node i owns l0[i*m0 : i*m0+l0n[i]]
	l0n    []uint16
	m0     int
	upper  map[int32][][]int32 // node → links on layers 1..level
	level  []uint8
	entry  int32
	top    int
	visits sync.Pool // *visited, one per concurrent search
}

type visited struct {
	mark []uint32
	gen  uint32
}

func (v *visited) next(n int) {
	if len(v.mark) < n {
		v.mark = make([]uint32, n)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 { // wrapped: clear
		clear(v.mark)
		v.gen = 1
	}
}

// BuildHNSW indexes the vectors of ix (which must not change afterwards:
// the graph shares its storage). Insertion is sequential and deterministic
// for a given Seed.
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
	h := &HNSW{
		opt: opt, dim: dim, data: data, n: n, m0: 2 * opt.M,
		l0: make([]int32, n*2*opt.M), l0n: make([]uint16, n),
		upper: map[int32][][]int32{}, level: make([]uint8, n),
	}
	h.visits.New = func() any { return &visited{} }
	rng := rand.New(rand.NewPCG(opt.Seed, 0x4a5b))
	ml := 1 / math.Log(float64(opt.M)) // level multiplier m_L = 1/ln M (Malkov and Yashunin 2018 §4.1)
	h.insertFirst()
	for i := 1; i < n; i++ {
		l := int(math.Floor(-math.Log(1-rng.Float64()) * ml))
		h.insert(int32(i), min(l, 30))
	}
	return h, nil
}

// Len is the number of items.
func (h *HNSW) Len() int { return h.n }

// Dim is the vector dimension.
func (h *HNSW) Dim() int { return h.dim }

func (h *HNSW) vec(i int32) []float64 {
	return h.data[int(i)*h.dim : (int(i)+1)*h.dim : (int(i)+1)*h.dim]
}

// dist is the squared distance as Index.search sums it (SquaredDistance),
// so both indexes report bit-identical distances.
func (h *HNSW) dist(q []float64, i int32) float64 { return SquaredDistance(q, h.vec(i)) }

func (h *HNSW) links(i int32, l int) []int32 {
	if l == 0 {
		return h.l0[int(i)*h.m0 : int(i)*h.m0+int(h.l0n[i])]
	}
	return h.upper[i][l-1]
}

func (h *HNSW) setLinks(i int32, l int, nb []int32) {
	if l == 0 {
		copy(h.l0[int(i)*h.m0:], nb)
		h.l0n[i] = uint16(len(nb))
		return
	}
	h.upper[i][l-1] = append(h.upper[i][l-1][:0], nb...)
}

func (h *HNSW) insertFirst() {
	h.entry, h.top = 0, 0
}

// insert adds node q at level l (Malkov and Yashunin 2018, Alg. 1).
func (h *HNSW) insert(q int32, l int) {
	h.level[q] = uint8(l)
	if l > 0 {
		h.upper[q] = make([][]int32, l)
	}
	x := h.vec(q)
	vis := h.visits.Get().(*visited)
	defer h.visits.Put(vis)
	ep := []cand{{id: h.entry, d: h.dist(x, h.entry)}}
	for lc := h.top; lc > l; lc-- {
		ep = h.searchLayer(x, ep, 1, lc, vis)
	}
	for lc := min(l, h.top); lc >= 0; lc-- {
		w := h.searchLayer(x, ep, h.opt.EfConstruction, lc, vis)
		mmax := h.opt.M
		if lc == 0 {
			mmax = h.m0
		}
		nb := h.selectNeighbours(w, h.opt.M)
		ids := make([]int32, len(nb))
		for k, c := range nb {
			ids[k] = c.id
		}
		h.setLinks(q, lc, ids)
		for _, c := range nb {
			e := c.id
			cur := h.links(e, lc)
			if len(cur) < mmax {
				h.setLinks(e, lc, append(slices.Clone(cur), q))
				continue
			}
			// Shrink e's links back to mmax with the heuristic.
			ve := h.vec(e)
			cs := make([]cand, 0, len(cur)+1)
			for _, o := range cur {
				cs = append(cs, cand{id: o, d: h.dist(ve, o)})
			}
			cs = append(cs, cand{id: q, d: c.d})
			sortCands(cs)
			kept := h.selectNeighbours(cs, mmax)
			ids := make([]int32, len(kept))
			for k, c := range kept {
				ids[k] = c.id
			}
			h.setLinks(e, lc, ids)
		}
		ep = w
	}
	if l > h.top {
		h.top, h.entry = l, q
	}
}

// selectNeighbours is the heuristic of Malkov and Yashunin 2018, Alg. 4
// (without extending the candidates): scanning candidates by increasing
// distance, keep c unless it is closer to an already kept neighbour than
// to the base point; fill up with the discarded ones when fewer than m
// survive. cs is sorted.
func (h *HNSW) selectNeighbours(cs []cand, m int) []cand {
	if len(cs) <= m {
		return cs
	}
	kept := make([]cand, 0, m)
	var dropped []cand
	for _, c := range cs {
		if len(kept) == m {
			break
		}
		vc := h.vec(c.id)
		good := true
		for _, r := range kept {
			if h.dist(vc, r.id) < c.d {
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
	return kept
}

// cand is a node with its distance to the query.
type cand struct {
	id int32
	d  float64
}

func sortCands(cs []cand) {
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return int(a.id) - int(b.id)
	})
}

type minCands []cand

func (h minCands) Len() int           { return len(h) }
func (h minCands) Less(i, j int) bool { return h[i].d < h[j].d }
func (h minCands) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minCands) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *minCands) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type maxCands []cand

func (h maxCands) Len() int           { return len(h) }
func (h maxCands) Less(i, j int) bool { return h[i].d > h[j].d }
func (h maxCands) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxCands) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *maxCands) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// searchLayer is Malkov and Yashunin 2018, Alg. 2: a best-first search of
// layer l from the entry points ep keeping the ef nearest found; it returns
// them sorted.
func (h *HNSW) searchLayer(q []float64, ep []cand, ef, l int, vis *visited) []cand {
	vis.next(h.n)
	cands := make(minCands, 0, ef)
	found := make(maxCands, 0, ef+1)
	for _, e := range ep {
		vis.mark[e.id] = vis.gen
		cands = append(cands, e)
		found = append(found, e)
	}
	heap.Init(&cands)
	heap.Init(&found)
	for len(found) > ef {
		heap.Pop(&found)
	}
	for len(cands) > 0 {
		c := heap.Pop(&cands).(cand)
		if len(found) >= ef && c.d > found[0].d {
			break
		}
		for _, e := range h.links(c.id, l) {
			if vis.mark[e] == vis.gen {
				continue
			}
			vis.mark[e] = vis.gen
			d := h.dist(q, e)
			if len(found) < ef || d < found[0].d {
				heap.Push(&cands, cand{id: e, d: d})
				heap.Push(&found, cand{id: e, d: d})
				if len(found) > ef {
					heap.Pop(&found)
				}
			}
		}
	}
	out := []cand(found)
	sortCands(out)
	return out
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
	vis := h.visits.Get().(*visited)
	defer h.visits.Put(vis)
	ep := []cand{{id: h.entry, d: h.dist(q, h.entry)}}
	for lc := h.top; lc > 0; lc-- {
		ep = h.searchLayer(q, ep, 1, lc, vis)
	}
	for ef := max(h.opt.EfSearch, k); ; ef *= 2 {
		w := h.searchLayer(q, ep, ef, 0, vis)
		out := make([]Neighbour, 0, k)
		for _, c := range w {
			id := int(c.id)
			if id == self || exclude != nil && exclude(id) {
				continue
			}
			out = append(out, Neighbour{ID: id, Distance: c.d})
			if len(out) == k {
				return out
			}
		}
		if len(out) == want {
			return out
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
