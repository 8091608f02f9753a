package serving

import (
	"context"
	"slices"
	"sync"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/retrieval"
)

// similarityOf is the item similarity MMR uses for a list of catalogue c
// answered by model m (nil: popularity or a similar-items answer): the
// one GET /items/{id}/similar?by=collaborative answers from, that is m's
// own item neighbour lists when it keeps them, else those of the served
// model that answers similar items; with no model keeping lists, the
// content similarity of by=content; with neither, nil (every pair 0).
func (e *Engine) similarityOf(ctx context.Context, c *catalogueCache, m *Served) (func([]Candidate) func(a, b int) float64, error) {
	if m != nil {
		if nb, ok := m.Model.(recsys.ItemNeighbourhood); ok {
			return neighbourSimilarity(nb, len(c.cat.ItemIDs)), nil
		}
	}
	if _, nb := e.neighbourModel(); nb != nil {
		return neighbourSimilarity(nb, len(c.cat.ItemIDs)), nil
	}
	return e.contentSimilarity(ctx, c)
}

// contentSimilarity is the similarity of by=content, 1/(1+d) for the
// squared distance d under the learned metric, between two items with
// features; 0 when either has none. It is nil when no content model is
// served.
func (e *Engine) contentSimilarity(ctx context.Context, c *catalogueCache) (func([]Candidate) func(a, b int) float64, error) {
	cm := e.contentSearch()
	if cm == nil {
		return nil, nil
	}
	ix, err := cm.index(ctx, c.itemsVersion)
	if err != nil {
		return nil, err
	}
	return func(pool []Candidate) func(a, b int) float64 {
		vecs := make([][]float64, len(pool))
		for k, p := range pool {
			if id, ok := ix.byItem[p.Item]; ok {
				vecs[k] = ix.searcher.Index.Vector(id)
			}
		}
		return func(a, b int) float64 {
			if vecs[a] == nil || vecs[b] == nil {
				return 0
			}
			return 1 / (1 + retrieval.SquaredDistance(vecs[a], vecs[b]))
		}
	}, nil
}

// positions recycles the item → pool position arrays of
// neighbourSimilarity, all −1 between uses.
var positions = sync.Pool{New: func() any { return new([]int32) }}

// neighbourSimilarity is the similarity of two items from the item
// neighbour lists (recsys.ItemNeighbourhood): the affinity of one in the
// other's list divided by the first (largest) affinity of that list, the
// larger of the two directions, 0 when neither lists the other. The
// affinities are on no common scale (a cosine, a KUNN sum, a SLIM
// weight), and their ratio to the list's best is: 1 for an item's nearest
// neighbour, in [0, 1] for the others, as the normalised relevance is.
// The pool's pairs are read once, walking each pool item's list, so a
// request costs |pool|·k array reads however many pairs MMR asks for.
func neighbourSimilarity(nb recsys.ItemNeighbourhood, items int) func([]Candidate) func(a, b int) float64 {
	return func(pool []Candidate) func(a, b int) float64 {
		bufp := positions.Get().(*[]int32)
		if len(*bufp) < items {
			*bufp = slices.Repeat([]int32{-1}, items)
		}
		pos := *bufp
		for k, p := range pool {
			if int(p.Item) < len(pos) {
				pos[p.Item] = int32(k)
			}
		}
		// The pool's edges in both directions, grouped by row (CSR): the
		// lists are walked twice, to count each row and then to fill it,
		// so that nothing grows (with popular items a pool's lists name
		// each other, up to 2·|pool|·k edges).
		start := make([]int32, len(pool)+1)
		walk := func(edge func(a, b int32, v float32)) {
			for k, p := range pool {
				list := nb.Similar(p.Item)
				if len(list) == 0 || !(list[0].Value > 0) {
					continue
				}
				top := list[0].Value
				for _, n := range list {
					if int(n.Index) >= len(pos) {
						continue
					}
					if j := pos[n.Index]; j >= 0 && int(j) != k {
						edge(int32(k), j, float32(min(max(n.Value/top, 0), 1)))
					}
				}
			}
		}
		walk(func(a, b int32, _ float32) { start[a+1]++; start[b+1]++ })
		for k := range pool {
			start[k+1] += start[k]
		}
		cols := make([]int32, start[len(pool)])
		vals := make([]float32, len(cols))
		next := slices.Clone(start[:len(pool)])
		walk(func(a, b int32, v float32) {
			cols[next[a]], vals[next[a]] = b, v
			next[a]++
			cols[next[b]], vals[next[b]] = a, v
			next[b]++
		})
		for _, p := range pool {
			if int(p.Item) < len(pos) {
				pos[p.Item] = -1
			}
		}
		positions.Put(bufp)
		// Row b holds every pair (a, b) that row a holds, so sim(a, b) is
		// read from row b spread over the pool once per b: MMR asks for
		// every candidate against the item it just picked.
		dense := make([]float32, len(pool))
		last := -1
		return func(a, b int) float64 {
			if b != last {
				clear(dense)
				for x := start[b]; x < start[b+1]; x++ {
					dense[cols[x]] = max(dense[cols[x]], vals[x])
				}
				last = b
			}
			return float64(dense[a])
		}
	}
}

// diversifyOptions are the options of d for a list of n items of
// catalogue c, MMR with the similarity sim.
func diversifyOptions(c *catalogueCache, d api.Diversity, n int, sim func([]Candidate) func(a, b int) float64) DiversifyOptions {
	o := DiversifyOptions{N: n, MaxPerCategory: d.MaxPerCategory, Categories: catalogueCategories(c), Similarity: sim}
	if d.Lambda != nil {
		o.MMR, o.Lambda = true, *d.Lambda
	}
	return o
}

// catalogueCategories returns the categories of an item of catalogue c.
func catalogueCategories(c *catalogueCache) func(uint32) []string {
	return func(i uint32) []string {
		if int(i) < len(c.cat.Categories) {
			return c.cat.Categories[i]
		}
		return nil
	}
}

// diversified returns the first o.N items of the diversified ranking
// whose first k candidates fetch(k) returns (all of them when the
// ranking has fewer). It asks first for o.N candidates, or the MMR pool
// if that is larger, and four times as many each time the category cap
// leaves the list short while the ranking may hold more, up to total
// (the catalogue's size): so n items come back whenever the ranking has
// n that the cap admits. Diversify is prefix-stable, so a deeper fetch
// only lengthens the list.
func diversified(o DiversifyOptions, total int, fetch func(k int) ([]Candidate, error)) ([]Candidate, error) {
	k := o.N
	if o.MMR {
		k = max(k, cmpOr(o.Pool, DiversityPool))
	}
	k = max(min(k, total), 1)
	for {
		ranked, err := fetch(k)
		if err != nil {
			return nil, err
		}
		out := Diversify(ranked, o)
		if len(out) >= o.N || len(ranked) < k || k >= total {
			return out, nil
		}
		k = min(4*k, total)
	}
}
