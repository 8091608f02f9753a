package recsys

import (
	"context"
	"sync"
)

// Similarity kinds a NeighbourCache can hold.
const (
	simCosine = "cosine" // §4.3
	simKUNN   = "kunn"   // Eq. (4.5)
)

// NeighbourCache computes the item neighbour lists of one training matrix
// once, at k_max, so that a grid search over k takes prefixes instead of
// recomputing them (dissertation §4.5.6). It is safe for concurrent use.
type NeighbourCache struct {
	x     *Matrix
	kmax  int
	mu    sync.Mutex
	lists map[string]*Neighbours
}

// NewNeighbourCache returns an empty cache for x and neighbourhoods of up
// to kmax items.
func NewNeighbourCache(x *Matrix, kmax int) *NeighbourCache {
	return &NeighbourCache{x: x, kmax: kmax, lists: map[string]*Neighbours{}}
}

// MaxRow is the longest item neighbour list under the cosine similarity
// (computing it if needed): a larger k gives the same model, so a grid
// search can stop there ("k capped by the data").
func (c *NeighbourCache) MaxRow(ctx context.Context, progress ProgressFunc) (int, error) {
	nb, err := c.full(ctx, simCosine, progress)
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
	if kind == simKUNN {
		return ItemKUNNKNN(ctx, x, k, progress)
	}
	return ItemCosineKNN(ctx, x, k, progress)
}

// itemNeighbours returns the k-truncated item lists of the given kind,
// from the cache when it fits x and k, computing them otherwise.
func itemNeighbours(ctx context.Context, x *Matrix, kind string, p Params) (*Neighbours, error) {
	if c := p.Cache; c != nil && c.x == x && p.K <= c.kmax {
		nb, err := c.full(ctx, kind, p.Progress)
		if err != nil {
			return nil, err
		}
		return nb.Truncate(p.K), nil
	}
	return computeItemKNN(ctx, x, kind, p.K, p.Progress)
}
