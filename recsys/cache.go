package recsys

import (
	"context"
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

// KMax is the longest neighbour list the cache keeps.
func (c *NeighbourCache) KMax() int { return c.kmax }

// MaxRow is the longest item neighbour list under the cosine similarity
// (computing it if needed): a larger k gives the same model, so a grid
// search can stop there ("k capped by the data").
func (c *NeighbourCache) MaxRow(ctx context.Context, progress ProgressFunc) (int, error) {
	nb, err := c.full(ctx, SimCosine, progress)
	if err != nil {
		return 0, err
	}
	return nb.MaxRow(), nil
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
