package serving

import (
	"math"
	"slices"
)

// DiversityPool is how many of the best candidates the similarity-aware
// re-rank (MMR) reorders. It is fixed, not derived from n or the offset,
// so that the diversified list is the same for every page size and each
// page continues the one before; past the pool the list goes on in the
// model's order.
const DiversityPool = 200

// Candidate is one item of a ranked list: its dense index in the
// catalogue and the score the list was ranked by, best first.
type Candidate struct {
	Item  uint32
	Score float64
}

// DiversifyOptions say how Diversify shortens and reorders a list.
type DiversifyOptions struct {
	// N is the length of the list wanted.
	N int
	// MaxPerCategory, when positive, admits an item only while each of
	// its categories has fewer than that many items in the list above.
	MaxPerCategory int
	// MMR turns on the similarity-aware re-rank with weight Lambda
	// (0..1) on relevance.
	MMR    bool
	Lambda float64
	// Pool is how many of the first candidates MMR reorders
	// (0 = DiversityPool).
	Pool int
	// Categories returns an item's categories; nil: none has any.
	Categories func(item uint32) []string
	// Similarity is called once with the MMR pool and returns the
	// similarity, in [0, 1], of the pool's candidates at positions a and
	// b; nil: every pair has similarity 0, and MMR keeps the model's
	// order.
	Similarity func(pool []Candidate) func(a, b int) float64
}

// Diversify returns at most o.N candidates of ranked (best first) in the
// order the options ask for.
//
// With MMR, the first Pool candidates are placed greedily by maximal
// marginal relevance (Carbonell and Goldstein 1998, see
// docs/references.md): the next item is argmax λ·rel(i) − (1−λ)·max_{j∈S}
// sim(i, j) over the pool items not yet placed, S being those placed.
// The model's scores are on no common scale (a count, a cosine, a
// regression weight), so rel is the score min–max normalised over the
// pool, (s − s_min)/(s_max − s_min), 1 for all when they are equal: the
// pool's best is 1 and its worst 0, the range of the similarities. Ties
// go to the better-ranked candidate, so λ = 1 is the model's order and
// the first item is always the model's first. The pool used up, the
// rest follow in the model's order.
//
// With a category cap, an item whose categories include one already
// holding MaxPerCategory items is skipped, and the list goes on with the
// next; with MMR too, a skipped item is never placed, since counts only
// grow. An item without categories is never skipped.
//
// The result is a prefix-stable function of ranked: the first k items
// for N = k are the first k for any larger N, and a longer ranked list
// with the same beginning only adds items at the end, so a caller short
// of N items can ask its source for more candidates and call again.
func Diversify(ranked []Candidate, o DiversifyOptions) []Candidate {
	out := make([]Candidate, 0, min(o.N, len(ranked)))
	if o.N <= 0 {
		return out
	}
	capped := newCategoryCap(o.MaxPerCategory, o.Categories)
	rest := ranked
	if o.MMR {
		pool := ranked[:min(len(ranked), cmpOr(o.Pool, DiversityPool))]
		out = mmr(out, pool, o, capped)
		rest = ranked[len(pool):]
	}
	for _, c := range rest {
		if len(out) == o.N {
			break
		}
		if capped.admit(c.Item) {
			out = append(out, c)
		}
	}
	return out
}

// mmr appends to out the candidates of pool in MMR order until out has
// o.N items or no pool item is left that the cap admits.
func mmr(out, pool []Candidate, o DiversifyOptions, capped *categoryCap) []Candidate {
	if len(pool) == 0 {
		return out
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range pool {
		if isFinite(c.Score) {
			lo, hi = min(lo, c.Score), max(hi, c.Score)
		}
	}
	rel := make([]float64, len(pool))
	for k, c := range pool {
		switch {
		case !isFinite(c.Score):
		case hi > lo:
			rel[k] = (c.Score - lo) / (hi - lo)
		default:
			rel[k] = 1
		}
	}
	var sim func(a, b int) float64
	if o.Similarity != nil {
		sim = o.Similarity(pool)
	}
	maxSim := make([]float64, len(pool))
	done := make([]bool, len(pool))
	recheck := capped != nil
	for len(out) < o.N {
		if recheck {
			// A category filled: its items are out for good, since counts
			// only grow.
			for k := range pool {
				done[k] = done[k] || !capped.allows(pool[k].Item)
			}
		}
		best, bestV := -1, math.Inf(-1)
		for k := range pool {
			if done[k] {
				continue
			}
			if v := o.Lambda*rel[k] - (1-o.Lambda)*maxSim[k]; best < 0 || v > bestV {
				best, bestV = k, v
			}
		}
		if best < 0 {
			break
		}
		done[best] = true
		recheck = capped.add(pool[best].Item)
		out = append(out, pool[best])
		if sim == nil {
			continue
		}
		for k := range pool {
			if !done[k] {
				maxSim[k] = max(maxSim[k], sim(k, best))
			}
		}
	}
	return out
}

// categoryCap counts the categories of the items admitted to a list.
type categoryCap struct {
	k      int
	cats   func(uint32) []string
	counts map[string]int
}

func newCategoryCap(k int, cats func(uint32) []string) *categoryCap {
	if k <= 0 || cats == nil {
		return nil
	}
	return &categoryCap{k: k, cats: cats, counts: map[string]int{}}
}

// allows reports whether item has room in every one of its categories.
func (c *categoryCap) allows(item uint32) bool {
	if c == nil {
		return true
	}
	for _, cat := range c.cats(item) {
		if c.counts[cat] >= c.k {
			return false
		}
	}
	return true
}

// admit counts item into the list when it has room and reports whether
// it did; a category an item lists twice counts once.
func (c *categoryCap) admit(item uint32) bool {
	if c == nil {
		return true
	}
	if !c.allows(item) {
		return false
	}
	c.add(item)
	return true
}

// add counts item into the list and reports whether one of its
// categories became full.
func (c *categoryCap) add(item uint32) (filled bool) {
	if c == nil {
		return false
	}
	cats := c.cats(item)
	for k, cat := range cats {
		if !slices.Contains(cats[:k], cat) {
			c.counts[cat]++
			filled = filled || c.counts[cat] == c.k
		}
	}
	return filled
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}
