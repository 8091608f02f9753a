package recsys

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Similarity kinds of neighbour lists (ItemNeighbours,
// NewUserNeighbourhood), which a NeighbourCache holds by kind.
const (
	SimCosine = "cosine" // §4.3
	SimKUNN   = "kunn"   // Eqs. (4.5)–(4.6)
)

// NeighbourCache computes the item neighbour lists of one training matrix
// once, at k_max, so that a grid search over k takes prefixes instead of
// recomputing them (dissertation §4.5.6). It is safe for concurrent use.
type NeighbourCache struct {
	x     *Matrix
	kmax  int
	mu    sync.Mutex
	lists map[string]*Neighbours
	users map[string]*userLists
	co    *coCounter
}

// slimCounts returns the pair counter fsSLIM builds its Gram matrices
// from when p.Cache was built on x, computing it once; nil otherwise
// (fitSLIM then builds its own).
func slimCounts(ctx context.Context, x *Matrix, p Params) (*coCounter, error) {
	c := p.Cache
	if c == nil || c.x != x {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.co == nil {
		co, err := newCoCounter(ctx, x, slimPopularItems)
		if err != nil {
			return nil, err
		}
		c.co = co
	}
	return c.co, nil
}

// userLists memoises KNN(u) at k_max of the training users scored with
// their own training row (validation), by similarity kind: a grid over k
// takes prefixes, so each sampled user's neighbours are searched once per
// kind instead of once per grid point and model. Rows fill as users are
// scored; only those users cost memory (k_max entries each).
type userLists struct {
	rows []atomic.Pointer[[]Neighbour]
}

// userLists returns the memo of one user similarity kind, creating it.
func (c *NeighbourCache) userLists(kind string) *userLists {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.users == nil {
		c.users = map[string]*userLists{}
	}
	l := c.users[kind]
	if l == nil {
		l = &userLists{rows: make([]atomic.Pointer[[]Neighbour], c.x.Users())}
		c.users[kind] = l
	}
	return l
}

// forUsers returns the memo of user neighbour lists of a kind for a user
// model of neighbourhood size k on x, nil when the cache does not fit
// them (another matrix, or k > k_max).
func (c *NeighbourCache) forUsers(x *Matrix, k int, kind string) *userLists {
	if c == nil || c.x != x || k > c.kmax {
		return nil
	}
	return c.userLists(kind)
}

// MemoisedUsers is the number of training users whose KNN(u) under the
// similarity kind the cache holds (filled as user models score them).
func (c *NeighbourCache) MemoisedUsers(kind string) int {
	c.mu.Lock()
	l := c.users[kind]
	c.mu.Unlock()
	n := 0
	if l != nil {
		for u := range l.rows {
			if l.rows[u].Load() != nil {
				n++
			}
		}
	}
	return n
}

// NewNeighbourCache returns an empty cache for x and neighbourhoods of up
// to kmax items.
func NewNeighbourCache(x *Matrix, kmax int) *NeighbourCache {
	return &NeighbourCache{x: x, kmax: kmax, lists: map[string]*Neighbours{}}
}

// Release drops the item lists and pair counts the cache holds, for the
// garbage collector; a later request computes them again. Models fitted
// on the cache keep the lists they took.
func (c *NeighbourCache) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.lists)
	c.co = nil
}

// KMax is the longest neighbour list the cache keeps.
func (c *NeighbourCache) KMax() int { return c.kmax }

// MaxRow is the longest item neighbour list under the cosine similarity,
// at most k_max: a larger k gives the same model, so a grid search can
// stop there ("k capped by the data"). It reads the cached lists when they
// are built, and otherwise counts co-occurrences (maxCooccurring), which
// gives the same number without building a list: at a million items the
// lists take gigabytes and minutes, and a model without item lists (a user
// or factor model) only needs this number.
func (c *NeighbourCache) MaxRow(ctx context.Context, progress ProgressFunc) (int, error) {
	c.mu.Lock()
	nb := c.lists[SimCosine]
	c.mu.Unlock()
	if nb != nil {
		return nb.MaxRow(), nil
	}
	return maxCooccurring(ctx, c.x, c.kmax)
}

// maxCooccurring is max over items i of |{j ≠ i : O⁺i ∩ O⁺j ≠ ∅}|, capped
// at kmax: the length of the longest cosine neighbour list at k_max, since
// every co-occurring pair has a positive cosine (§4.3). Items are visited
// by decreasing bound Σ_{u ∈ O⁺i} (|O⁺u| − 1), and the visit stops once
// the bound cannot beat the longest found, so on real data one popular
// item usually settles it.
func maxCooccurring(ctx context.Context, x *Matrix, kmax int) (int, error) {
	n := x.Items()
	bound := make([]int, n)
	order := make([]uint32, 0, n)
	for i := range n {
		for _, u := range x.byItem.row(i) {
			bound[i] += len(x.byUser.row(int(u))) - 1
		}
		if bound[i] > 0 {
			order = append(order, uint32(i))
		}
	}
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(bound[b], bound[a]) })
	seen := make([]uint32, n) // seen[j] == i+1: j counted for item i
	best := 0
	for v, i := range order {
		if best >= kmax || bound[i] <= best {
			break
		}
		if v%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		count := 0
		for _, u := range x.byItem.row(int(i)) {
			for _, j := range x.byUser.row(int(u)) {
				if j != i && seen[j] != i+1 {
					seen[j] = i + 1
					count++
				}
			}
		}
		best = max(best, count)
	}
	return min(best, kmax), nil
}

func (c *NeighbourCache) full(ctx context.Context, kind string, progress ProgressFunc) (*Neighbours, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if nb := c.lists[kind]; nb != nil {
		return nb, nil
	}
	nb, err := computeItemKNN(ctx, c.x, kind, c.kmax, progress)
	if err != nil {
		return nil, err
	}
	c.lists[kind] = nb
	return nb, nil
}

func computeItemKNN(ctx context.Context, x *Matrix, kind string, k int, progress ProgressFunc) (*Neighbours, error) {
	if kind == SimKUNN {
		return ItemKUNNKNN(ctx, x, k, progress)
	}
	return ItemCosineKNN(ctx, x, k, progress)
}

// ItemNeighbours returns KNN(i) of every item at k = p.K under the
// similarity kind (SimCosine or SimKUNN), with the similarity as the value,
// in KNN order: prefixes of p.Cache's lists when it was built on x with
// k_max ≥ p.K, computed otherwise (reporting to p.Progress).
func ItemNeighbours(ctx context.Context, x *Matrix, kind string, p Params) (*Neighbours, error) {
	if c := p.Cache; c != nil && c.x == x && p.K <= c.kmax {
		nb, err := c.full(ctx, kind, p.Progress)
		if err != nil {
			return nil, err
		}
		return nb.Truncate(p.K), nil
	}
	return computeItemKNN(ctx, x, kind, p.K, p.Progress)
}
