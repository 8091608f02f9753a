package serving

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/content"
	"github.com/recsys-engine/recsys/retrieval"
)

// contentSearch is the engine's search by the served content model: the
// catalogue projected by its metric (exact, or HNSW above approxAbove
// items). The index is rebuilt when the catalogue changes, so items added
// after training (cold items) are searchable.
type contentSearch struct {
	served *Served // the content model, as served
	model  *content.Content

	mu          sync.Mutex // serialises rebuilds
	built       atomic.Pointer[contentIndex]
	features    func(ctx context.Context) ([]string, [][]float64, error)
	approxAbove int         // see EngineOptions.ContentApproxAbove
	building    atomic.Bool // a background HNSW build is running
	log         *slog.Logger
}

// contentIndex is one build of the projected catalogue.
type contentIndex struct {
	itemsVersion uint64
	searcher     *retrieval.Searcher
	items        []uint32 // index id → dense item index
	byItem       map[uint32]int
	// evidence tells, by index id, whether the item has a nonzero value
	// of a feature that counts as evidence (content.Content.Evidence): only such
	// an item may take a cold slot.
	evidence []bool
	// coldVecs holds, by index id, the cold-slot vector of an item with
	// evidence and a nonzero feature that is no evidence: projected with
	// that feature 0, as if the item lacked it (the value of all but at
	// most one of the known items), so that a cold item is placed by the
	// features that known items share alone. Other items use their
	// indexed vector.
	coldVecs map[int][]float64
}

// contentSearch returns the search by the content model in the served set,
// nil when none is served. A content model's search is made, its index
// built, before the model is served (prepareContent); a model that was not
// prepared (its index failed to build) gets one at the first request.
func (e *Engine) contentSearch() *contentSearch {
	m := e.models.Load().byName[content.Name]
	if m == nil {
		return nil
	}
	if s := m.search.Load(); s != nil {
		return s
	}
	s := e.newContentSearch(m)
	if s == nil || !m.search.CompareAndSwap(nil, s) {
		return m.search.Load()
	}
	return s
}

func (e *Engine) newContentSearch(m *Served) *contentSearch {
	cm, ok := m.Model.(*content.Content)
	if !ok {
		return nil
	}
	return &contentSearch{served: m, model: cm, features: e.src.ItemFeatures, approxAbove: e.opts.ContentApproxAbove, log: e.opts.Logger}
}

// prepareContent builds the index of a content model before it is served,
// the HNSW graph included above the threshold, so that no request waits
// for a build or answers by a scan of the whole catalogue meanwhile: at a
// start the model counts as loading (Ready fails) until its index is
// built, and a newly trained model replaces the one serving only once its
// index is. workers is HNSWOptions.Workers. Models of other kinds are left
// as they are. An index that fails to build is built again by the first
// request that needs it.
func (e *Engine) prepareContent(ctx context.Context, m *Served, workers int) {
	s := e.newContentSearch(m)
	if s == nil {
		return
	}
	items, _ := e.src.Versions()
	ix, err := s.build(ctx, items)
	if err != nil {
		return
	}
	if s.wantsApprox(ix) {
		if ix, err = s.withApprox(ix, workers); err != nil {
			return
		}
	}
	s.built.Store(ix)
	m.search.Store(s)
}

// withApprox returns ix with the HNSW graph of its vectors: the graph
// persisted with the model when it was built on the same vectors
// (persistedGraph), else one built now. It logs which.
func (c *contentSearch) withApprox(ix *contentIndex, workers int) (*contentIndex, error) {
	h, why := c.persistedGraph(ix)
	info := c.served.Info
	if h != nil {
		c.log.Info("content graph: using the graph persisted with the model", "model", info.Name, "version", info.Version, "items", h.Len())
	} else {
		start := time.Now()
		var err error
		if h, err = retrieval.BuildHNSW(ix.searcher.Index, retrieval.HNSWOptions{Seed: 1, Workers: workers}); err != nil {
			return nil, err
		}
		c.log.Info("content graph: built", "model", info.Name, "version", info.Version, "items", h.Len(),
			"seconds", time.Since(start).Seconds(), "reason", why)
	}
	s := *ix.searcher
	s.Approx = h
	approx := *ix
	approx.searcher = &s
	return &approx, nil
}

// persistedGraph returns the model's persisted graph over ix's vectors
// when it indexes the same items with the same projected vectors (items
// added or removed, or features changed since training, make it stale);
// otherwise nil and why not.
func (c *contentSearch) persistedGraph(ix *contentIndex) (*retrieval.HNSW, string) {
	g := c.model.Graph()
	switch {
	case g == nil:
		return nil, "the model holds no graph (trained on fewer featured items than the threshold, or before graphs were persisted)"
	case !slices.Equal(g.Items, ix.items):
		return nil, fmt.Sprintf("the featured items changed since training (%d then, %d now)", len(g.Items), len(ix.items))
	case g.Fingerprint != ix.searcher.Index.Fingerprint():
		return nil, "item features changed since training"
	}
	h, err := retrieval.AttachHNSW(ix.searcher.Index, g.HNSW)
	if err != nil {
		return nil, err.Error()
	}
	return h, ""
}

// index returns the projected catalogue, rebuilding it after catalogue
// changes. The rebuild is an exact index, quick to make; above approxAbove
// items an HNSW graph is then built in the background and swapped in when
// done (docs/performance.md), so no request waits for it: until then
// searches are exact.
func (c *contentSearch) index(ctx context.Context, itemsVersion uint64) (*contentIndex, error) {
	if b := c.built.Load(); b != nil && b.itemsVersion == itemsVersion {
		return b, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.built.Load(); b != nil && b.itemsVersion == itemsVersion {
		return b, nil
	}
	ix, err := c.build(ctx, itemsVersion)
	if err != nil {
		return nil, err
	}
	c.built.Store(ix)
	c.startApprox()
	return ix, nil
}

// build projects the catalogue of items version itemsVersion into an
// exact index.
func (c *contentSearch) build(ctx context.Context, itemsVersion uint64) (*contentIndex, error) {
	names, feats, err := c.features(ctx)
	if err != nil {
		return nil, err
	}
	pos := make(map[string]int, len(names))
	for k, n := range names {
		pos[n] = k
	}
	ix := &contentIndex{itemsVersion: itemsVersion, byItem: map[uint32]int{}, coldVecs: map[int][]float64{}}
	var vecs [][]float64
	for i, f := range feats {
		if f == nil {
			continue
		}
		v := make([]float64, len(c.model.Names()))
		evidence, other := false, false
		for k, n := range c.model.Names() {
			if p, ok := pos[n]; ok {
				v[k] = f[p]
			}
			if v[k] != 0 {
				if c.model.Evidence(k) {
					evidence = true
				} else {
					other = true
				}
			}
		}
		if evidence && other {
			cv := slices.Clone(v)
			for k := range cv {
				if !c.model.Evidence(k) {
					cv[k] = 0
				}
			}
			if ix.coldVecs[len(ix.items)], err = c.model.Metric().Project(cv); err != nil {
				return nil, err
			}
		}
		ix.byItem[uint32(i)] = len(ix.items)
		ix.items = append(ix.items, uint32(i))
		ix.evidence = append(ix.evidence, evidence)
		vecs = append(vecs, v)
	}
	if ix.searcher, err = retrieval.NewSearcher(c.model.Metric(), vecs); err != nil {
		return nil, err
	}
	return ix, nil
}

// wantsApprox reports whether ix is past the threshold without its graph.
func (c *contentSearch) wantsApprox(ix *contentIndex) bool {
	limit := c.approxAbove
	return ix != nil && limit >= 0 && !ix.searcher.Approximate() &&
		ix.searcher.Index.Len() > cmp.Or(limit, retrieval.DefaultApproxAbove)
}

// startApprox starts the background HNSW build unless one is running: one
// build at a time, always of the newest index, so a catalogue changing
// faster than a build takes costs one core, not a pile of builds.
func (c *contentSearch) startApprox() {
	if !c.wantsApprox(c.built.Load()) || !c.building.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			ix := c.built.Load()
			if c.wantsApprox(ix) {
				if approx, err := c.withApprox(ix, 1); err == nil {
					c.built.CompareAndSwap(ix, approx) // fails when a newer catalogue came
				} else {
					c.building.Store(false)
					return // the exact index keeps serving
				}
				continue
			}
			c.building.Store(false)
			// An index stored after the check above found building set
			// and left it to this loop.
			if !c.wantsApprox(c.built.Load()) || !c.building.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// vector orders a name → value map as the metric's features.
func (c *contentSearch) vector(f map[string]float64) ([]float64, error) {
	v := make([]float64, len(c.model.Names()))
	known := 0
	for k, n := range c.model.Names() {
		if x, ok := f[n]; ok {
			v[k] = x
			known++
		}
	}
	if known == 0 {
		return nil, api.FieldError("features", fmt.Sprintf("none of the model's features are given (it knows %d, e.g. %q)", len(c.model.Names()), c.model.Names()[0]))
	}
	return v, nil
}

// contentSimilar answers by=content.
func (e *Engine) contentSimilar(ctx context.Context, c *catalogueCache, idx uint32, n int) ([]api.ScoredItem, *contentSearch, error) {
	cm := e.contentSearch()
	if cm == nil && e.Loading(content.Name) {
		return nil, nil, api.ModelLoading(content.Name)
	}
	if cm == nil {
		return nil, nil, api.Errorf(api.CodeModelNotReady, "content similarity needs a learned metric over item features, and none is trained yet (items need features; POST /admin/retrain)")
	}
	ix, err := cm.index(ctx, c.itemsVersion)
	if err != nil {
		return nil, nil, err
	}
	id, ok := ix.byItem[idx]
	if !ok {
		return nil, nil, api.Errorf(api.CodeNotFound, "item %q has no features, so it has no content neighbours", c.cat.ItemIDs[idx])
	}
	nbs, err := ix.searcher.SimilarToItem(id, n, func(k int) bool { return hiddenOrGone(c.cat, ix.items[k]) })
	if err != nil {
		return nil, nil, err
	}
	return scored(c.cat, ix, nbs), cm, nil
}

// SearchSimilar ranks the catalogue for an unseen feature vector.
func (e *Engine) SearchSimilar(ctx context.Context, features map[string]float64, n int) (*api.SimilarItems, error) {
	cm := e.contentSearch()
	if cm == nil && e.Loading(content.Name) {
		return nil, api.ModelLoading(content.Name)
	}
	if cm == nil {
		return nil, api.Errorf(api.CodeModelNotReady, "query by example needs a learned metric over item features, and none is trained yet")
	}
	c, err := e.catalogue(ctx)
	if err != nil {
		return nil, err
	}
	ix, err := cm.index(ctx, c.itemsVersion)
	if err != nil {
		return nil, err
	}
	v, err := cm.vector(features)
	if err != nil {
		return nil, err
	}
	nbs, err := ix.searcher.SimilarToVector(v, n, func(k int) bool { return hiddenOrGone(c.cat, ix.items[k]) })
	if err != nil {
		return nil, err
	}
	return &api.SimilarItems{By: "content", Model: cm.served.Info.Name, ModelVersion: cm.served.Info.Version, Items: scored(c.cat, ix, nbs)}, nil
}

func hiddenOrGone(cat *api.Catalogue, i uint32) bool {
	return int(i) >= len(cat.ItemIDs) || cat.ItemIDs[i] == "" || cat.Hidden[i]
}

// scored turns neighbours into items with a similarity score 1/(1+d).
func scored(cat *api.Catalogue, ix *contentIndex, nbs []retrieval.Neighbour) []api.ScoredItem {
	out := make([]api.ScoredItem, 0, len(nbs))
	for _, nb := range nbs {
		out = append(out, api.ScoredItem{ItemID: cat.ItemIDs[ix.items[nb.ID]], Score: 1 / (1 + nb.Distance)})
	}
	return out
}
