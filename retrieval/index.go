package retrieval

import (
	"container/heap"
	"fmt"
	"sync"
)

// Neighbour is one search result: a dense item id and its squared distance.
type Neighbour struct {
	ID       int
	Distance float64
}

// Index is an exact top-k index over projected vectors Lᵀz(x), with dense
// integer ids 0..Len()-1. A search scans every item: O(n·m) with an early
// exit once a partial distance exceeds the current k-th best. It is safe for
// concurrent use: any number of searches run in parallel, and writes (Add,
// Set) wait for them. For hot swaps build a new Index off-line and publish
// it with an atomic.Pointer.
//
// Exact search is the right choice up to roughly n·m ≈ 3·10⁶ (e.g. 100,000
// items at m = 32) for a few-millisecond budget on one core; above that
// Searcher adds an HNSW index (see BenchmarkSimilar and the package
// documentation).
type Index struct {
	mu   sync.RWMutex
	dim  int
	data []float64 // row-major, n×dim
}

// NewIndex returns an empty index of vectors of dimension dim.
func NewIndex(dim int) *Index { return &Index{dim: dim} }

// BuildIndex indexes vectors; vector i gets id i.
func BuildIndex(vectors [][]float64) (*Index, error) {
	if len(vectors) == 0 {
		return nil, fmt.Errorf("retrieval: no vectors to index")
	}
	ix := NewIndex(len(vectors[0]))
	ix.data = make([]float64, 0, len(vectors)*ix.dim)
	for i, v := range vectors {
		if len(v) != ix.dim {
			return nil, fmt.Errorf("retrieval: vector %d has length %d, want %d", i, len(v), ix.dim)
		}
		ix.data = append(ix.data, v...)
	}
	return ix, nil
}

// Dim is the vector dimension.
func (ix *Index) Dim() int { return ix.dim }

// Len is the number of items.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.len()
}

func (ix *Index) len() int {
	if ix.dim == 0 {
		return 0
	}
	return len(ix.data) / ix.dim
}

// Add appends v and returns its id (the previous Len()).
func (ix *Index) Add(v []float64) (int, error) {
	if len(v) != ix.dim {
		return 0, fmt.Errorf("retrieval: vector of length %d, index holds %d", len(v), ix.dim)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.data = append(ix.data, v...)
	return ix.len() - 1, nil
}

// Set replaces the vector of an existing id.
func (ix *Index) Set(id int, v []float64) error {
	if len(v) != ix.dim {
		return fmt.Errorf("retrieval: vector of length %d, index holds %d", len(v), ix.dim)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if id < 0 || id >= ix.len() {
		return fmt.Errorf("retrieval: id %d out of range [0,%d)", id, ix.len())
	}
	copy(ix.data[id*ix.dim:], v)
	return nil
}

// Vector returns a copy of the vector of id (nil when out of range).
func (ix *Index) Vector(id int) []float64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if id < 0 || id >= ix.len() {
		return nil
	}
	return append([]float64(nil), ix.data[id*ix.dim:(id+1)*ix.dim]...)
}

// Search returns the k nearest items to the projected query q in increasing
// distance (ties by id), skipping ids for which exclude returns true
// (exclude may be nil; it is only called for would-be results).
func (ix *Index) Search(q []float64, k int, exclude func(id int) bool) []Neighbour {
	if len(q) != ix.dim || k <= 0 {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.search(q, k, exclude, -1)
}

// SearchID is Search by the stored vector of item id, which is left out of
// the results.
func (ix *Index) SearchID(id, k int, exclude func(id int) bool) []Neighbour {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if id < 0 || id >= ix.len() || k <= 0 {
		return nil
	}
	q := ix.data[id*ix.dim : (id+1)*ix.dim]
	return ix.search(q, k, exclude, id)
}

// SquaredDistance is ‖q − row‖², summed four coordinates at a time in the
// order of the exact search, so that every index and cache that uses it
// reports bit-identical distances, and so the same ties.
func SquaredDistance(q, row []float64) float64 {
	row = row[:len(q)] // one bounds check, and the loops need none
	d := 0.0
	for len(q) >= 4 && len(row) >= 4 {
		a, b, c, e := q[0]-row[0], q[1]-row[1], q[2]-row[2], q[3]-row[3]
		d += a*a + b*b + c*c + e*e
		q, row = q[4:], row[4:]
	}
	for j, v := range q {
		t := v - row[j]
		d += t * t
	}
	return d
}

// SquaredDistanceWithin is SquaredDistance when that is at most bound,
// bit for bit (the same sums in the same order); otherwise it may stop
// early and return a partial sum already above bound. A scan that keeps
// the k nearest passes its k-th distance and skips what comes back above
// it. The graph's within32 is its float32 twin; one generic function for
// both would not be inlined in the graph's search loops.
func SquaredDistanceWithin(q, row []float64, bound float64) float64 {
	row = row[:len(q)]
	d := 0.0
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

func (ix *Index) search(q []float64, k int, exclude func(int) bool, self int) []Neighbour {
	n, m := ix.len(), ix.dim
	h := make(maxHeap, 0, min(k, n))
	worst := 0.0 // distance of h[0] once full
	for id := 0; id < n; id++ {
		if id == self {
			continue
		}
		row := ix.data[id*m : (id+1)*m : (id+1)*m]
		full := len(h) == k
		d := 0.0
		j := 0
		for ; j+4 <= m; j += 4 {
			a, b, c, e := q[j]-row[j], q[j+1]-row[j+1], q[j+2]-row[j+2], q[j+3]-row[j+3]
			d += a*a + b*b + c*c + e*e
			if full && d > worst {
				break
			}
		}
		if full && d > worst {
			continue
		}
		for ; j < m; j++ {
			t := q[j] - row[j]
			d += t * t
		}
		if full && (d > worst || d == worst && id > h[0].ID) {
			continue
		}
		if exclude != nil && exclude(id) {
			continue
		}
		if full {
			h[0] = Neighbour{id, d}
			heap.Fix(&h, 0)
		} else {
			heap.Push(&h, Neighbour{id, d})
		}
		if len(h) == k {
			worst = h[0].Distance
		}
	}
	out := make([]Neighbour, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Neighbour)
	}
	return out
}

// maxHeap keeps the k best so far with the worst on top.
type maxHeap []Neighbour

func (h maxHeap) Len() int { return len(h) }
func (h maxHeap) Less(i, j int) bool {
	if h[i].Distance != h[j].Distance {
		return h[i].Distance > h[j].Distance
	}
	return h[i].ID > h[j].ID
}
func (h maxHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)   { *h = append(*h, x.(Neighbour)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
