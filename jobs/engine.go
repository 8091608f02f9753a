// Package jobs runs the background work of recsys on store snapshots, and
// holds what that work produces: the trained models the service answers
// from. Engine serves recommendations; later files add the scheduler.
package jobs

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"recsys/api"
)

// Source is what the engine reads from the store.
type Source interface {
	Profile(ctx context.Context, userID string) (api.Profile, error)
	Catalogue(ctx context.Context) (*api.Catalogue, error)
	Versions() (items, events uint64)
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	// PopularityTTL bounds how stale the cached popularity may be after new
	// interactions; catalogue writes invalidate the cache at once.
	PopularityTTL time.Duration
}

// Engine answers recommendation requests from the active model, falling
// back to popularity. It is safe for concurrent use.
type Engine struct {
	src  Source
	opts EngineOptions

	cache     atomic.Pointer[catalogueCache]
	refreshMu sync.Mutex
}

// catalogueCache is an immutable catalogue with its popularity order.
type catalogueCache struct {
	cat           *api.Catalogue
	byPopularity  []uint32 // live items, most popular first, ties by index
	itemsVersion  uint64
	eventsVersion uint64
	builtAt       time.Time
}

// NewEngine returns an engine reading from src.
func NewEngine(src Source, opts EngineOptions) *Engine {
	if opts.PopularityTTL == 0 {
		opts.PopularityTTL = 2 * time.Second
	}
	return &Engine{src: src, opts: opts}
}

// catalogue returns a fresh enough catalogue: rebuilt at once after a
// catalogue write, and at most every PopularityTTL after interactions. Only
// one goroutine rebuilds; the others keep answering from the old copy.
func (e *Engine) catalogue(ctx context.Context) (*catalogueCache, error) {
	items, events := e.src.Versions()
	fresh := func(c *catalogueCache) bool {
		return c != nil && c.itemsVersion == items &&
			(c.eventsVersion == events || time.Since(c.builtAt) < e.opts.PopularityTTL)
	}
	c := e.cache.Load()
	if fresh(c) {
		return c, nil
	}
	if c != nil && c.itemsVersion == items {
		// Only popularity is stale: one caller rebuilds, the rest go on.
		if !e.refreshMu.TryLock() {
			return c, nil
		}
	} else {
		e.refreshMu.Lock()
	}
	defer e.refreshMu.Unlock()
	if c = e.cache.Load(); fresh(c) {
		return c, nil
	}
	cat, err := e.src.Catalogue(ctx)
	if err != nil {
		return nil, err
	}
	c = &catalogueCache{cat: cat, itemsVersion: items, eventsVersion: events, builtAt: time.Now(),
		byPopularity: popularityOrder(cat)}
	e.cache.Store(c)
	return c, nil
}

// popularityOrder sorts the live items by popularity, most popular first;
// equal popularity is broken by dense index so the order is deterministic.
func popularityOrder(cat *api.Catalogue) []uint32 {
	order := make([]uint32, 0, len(cat.ItemIDs))
	for i, id := range cat.ItemIDs {
		if id != "" {
			order = append(order, uint32(i))
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := cat.Popularity[order[a]], cat.Popularity[order[b]]
		if pa != pb {
			return pa > pb
		}
		return order[a] < order[b]
	})
	return order
}

// Recommend answers GET /users/{id}/recommendations.
func (e *Engine) Recommend(ctx context.Context, req api.RecommendRequest) (*api.Recommendations, error) {
	if req.Model != "" && req.Model != "popular" {
		return nil, api.Errorf(api.CodeModelNotReady, "model %q is not trained yet", req.Model)
	}
	c, err := e.catalogue(ctx)
	if err != nil {
		return nil, err
	}
	prof, err := e.src.Profile(ctx, req.UserID)
	if err != nil {
		return nil, err
	}
	skip := newFilter(c.cat, prof, req)
	out := &api.Recommendations{UserID: req.UserID, Model: "popular", Fallback: "popular",
		Items: make([]api.ScoredItem, 0, req.N)}
	if req.Model == "popular" {
		out.Fallback = ""
	}
	for _, i := range c.byPopularity {
		if len(out.Items) == req.N {
			break
		}
		if skip(i) {
			continue
		}
		out.Items = append(out.Items, api.ScoredItem{ItemID: c.cat.ItemIDs[i], Score: float64(c.cat.Popularity[i])})
	}
	return out, nil
}

// newFilter returns the test for items a request must not get: deleted,
// hidden, outside the category, negative for the user, or consumed.
func newFilter(cat *api.Catalogue, prof api.Profile, req api.RecommendRequest) func(uint32) bool {
	excluded := make(map[uint32]struct{}, len(prof.Consumed))
	for _, i := range prof.Negative {
		excluded[i] = struct{}{}
	}
	if req.ExcludeConsumed {
		for _, i := range prof.Consumed {
			excluded[i] = struct{}{}
		}
	}
	return func(i uint32) bool {
		if int(i) >= len(cat.ItemIDs) || cat.ItemIDs[i] == "" || cat.Hidden[i] {
			return true
		}
		if _, ok := excluded[i]; ok {
			return true
		}
		if req.Category != "" {
			for _, c := range cat.Categories[i] {
				if c == req.Category {
					return false
				}
			}
			return true
		}
		return false
	}
}

// Similar answers GET /items/{id}/similar.
func (e *Engine) Similar(ctx context.Context, req api.SimilarRequest) (*api.SimilarItems, error) {
	c, err := e.catalogue(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := c.cat.Index[req.ItemID]; !ok {
		return nil, api.Errorf(api.CodeNotFound, "item %q not found", req.ItemID)
	}
	return nil, api.Errorf(api.CodeModelNotReady, "no %s similarity model is trained yet; POST /admin/retrain or run `recsys train`", req.By)
}

// Ready reports whether the engine can answer: the catalogue loads.
func (e *Engine) Ready(ctx context.Context) error {
	_, err := e.catalogue(ctx)
	return err
}
