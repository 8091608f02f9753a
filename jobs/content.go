package jobs

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"recsys/api"
	"recsys/recsys"
	"recsys/retrieval"
)

// ContentModelName is the name under which the learned content metric is
// persisted and listed in GET /models.
const ContentModelName = "content"

// TrainableNames lists what a training job can fit: the recommenders of
// package recsys and the content metric.
func TrainableNames() []string { return append(recsys.Names(), ContentModelName) }

// Trainable reports whether a training job can fit name.
func Trainable(name string) bool { return slices.Contains(TrainableNames(), name) }

// contentNeighbours is |X⁺q|: how many collaborative neighbours of an item
// the content metric learns to rank first (dissertation §3.2).
const contentNeighbours = 10

// content is a learned metric over item features and the index of the
// catalogue projected by it (exact, or HNSW above approxAbove items). The index is rebuilt when the catalogue
// changes, so items added after training (cold items) are searchable.
type content struct {
	info   api.ModelInfo
	metric *retrieval.Metric
	names  []string // the feature names the metric was learned on, in order

	mu          sync.Mutex // serialises rebuilds
	built       atomic.Pointer[contentIndex]
	features    func(ctx context.Context) ([]string, [][]float64, error)
	approxAbove int         // see EngineOptions.ContentApproxAbove
	building    atomic.Bool // a background HNSW build is running
}

// contentIndex is one build of the projected catalogue.
type contentIndex struct {
	itemsVersion uint64
	searcher     *retrieval.Searcher
	items        []uint32 // index id → dense item index
	byItem       map[uint32]int
}

// encodeContent writes the feature names and the metric.
func encodeContent(names []string, m *retrieval.Metric) ([]byte, error) {
	mb, err := m.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := binary.AppendUvarint(nil, uint64(len(names)))
	for _, n := range names {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
	}
	return append(b, mb...), nil
}

func decodeContent(b []byte) ([]string, *retrieval.Metric, error) {
	n, k := binary.Uvarint(b)
	// Each name takes at least its one-byte length, so a count the data
	// cannot hold is corrupt (and must not size an allocation).
	if k <= 0 || n > 1<<20 || n > uint64(len(b)-k) {
		return nil, nil, fmt.Errorf("content model: bad header")
	}
	b = b[k:]
	names := make([]string, n)
	for i := range names {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, nil, fmt.Errorf("content model: bad feature name")
		}
		names[i] = string(b[k : k+int(l)])
		b = b[k+int(l):]
	}
	m := new(retrieval.Metric)
	if err := m.UnmarshalBinary(b); err != nil {
		return nil, nil, err
	}
	if m.Dim() != len(names) {
		return nil, nil, fmt.Errorf("content model: %d feature names for a metric of dimension %d", len(names), m.Dim())
	}
	return names, m, nil
}

// minContentItems is the fewest items with both features and
// collaborative neighbours that the content metric learns from.
const minContentItems = 20

// learnContent learns a content metric supervised by the collaborative
// neighbours of the items that have both features and interactions, so
// that items with features but no interactions get similar items too. With
// fewer than minContentItems such items it learns nothing and returns
// their count.
func learnContent(ctx context.Context, snap *api.Snapshot, x *recsys.Matrix, seed uint64) (*retrieval.Metric, int, error) {
	if len(snap.FeatureNames) == 0 {
		return nil, 0, nil
	}
	nb, err := recsys.ItemCosineKNN(ctx, x, contentNeighbours, nil)
	if err != nil {
		return nil, 0, err
	}
	var rows []int // dense item indices with features and neighbours
	row := map[int]int{}
	for i := 0; i < x.Items() && i < len(snap.Features); i++ {
		if snap.Features[i] != nil && nb.Rows() > i && len(nb.Row(i)) > 0 {
			row[i] = len(rows)
			rows = append(rows, i)
		}
	}
	if len(rows) < minContentItems {
		return nil, len(rows), nil // too little supervision to learn from
	}
	X := make([][]float64, len(rows))
	rel := make([][]int, len(rows))
	for r, i := range rows {
		X[r] = snap.Features[i]
		for _, n := range nb.Row(i) {
			if q, ok := row[int(n.Index)]; ok {
				rel[r] = append(rel[r], q)
			}
		}
	}
	sup, err := retrieval.FromNeighbours(rel)
	if err != nil {
		return nil, 0, err
	}
	m, err := retrieval.Learn(ctx, X, sup, retrieval.LearnOptions{Method: retrieval.MethodFRML,
		Iterations: 10000, Segment: 2500, Seed: seed})
	return m, len(rows), err
}

// index returns the projected catalogue, rebuilding it after catalogue
// changes. The rebuild is an exact index, quick to make; above approxAbove
// items an HNSW graph is then built in the background and swapped in when
// done (81–93 s at 100,000 items), so no request waits for it: until then
// searches are exact.
func (c *content) index(ctx context.Context, itemsVersion uint64) (*contentIndex, error) {
	if b := c.built.Load(); b != nil && b.itemsVersion == itemsVersion {
		return b, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.built.Load(); b != nil && b.itemsVersion == itemsVersion {
		return b, nil
	}
	names, feats, err := c.features(ctx)
	if err != nil {
		return nil, err
	}
	pos := make(map[string]int, len(names))
	for k, n := range names {
		pos[n] = k
	}
	ix := &contentIndex{itemsVersion: itemsVersion, byItem: map[uint32]int{}}
	var vecs [][]float64
	for i, f := range feats {
		if f == nil {
			continue
		}
		v := make([]float64, len(c.names))
		for k, n := range c.names {
			if p, ok := pos[n]; ok {
				v[k] = f[p]
			}
		}
		ix.byItem[uint32(i)] = len(ix.items)
		ix.items = append(ix.items, uint32(i))
		vecs = append(vecs, v)
	}
	if ix.searcher, err = retrieval.NewSearcher(c.metric, vecs); err != nil {
		return nil, err
	}
	c.built.Store(ix)
	c.startApprox()
	return ix, nil
}

// wantsApprox reports whether ix is past the threshold without its graph.
func (c *content) wantsApprox(ix *contentIndex) bool {
	limit := c.approxAbove
	return ix != nil && limit >= 0 && !ix.searcher.Approximate() &&
		ix.searcher.Index.Len() > cmp.Or(limit, retrieval.DefaultApproxAbove)
}

// startApprox starts the background HNSW build unless one is running: one
// build at a time, always of the newest index, so a catalogue changing
// faster than a build takes costs one core, not a pile of builds.
func (c *content) startApprox() {
	if !c.wantsApprox(c.built.Load()) || !c.building.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			ix := c.built.Load()
			if c.wantsApprox(ix) {
				if h, err := retrieval.BuildHNSW(ix.searcher.Index, retrieval.HNSWOptions{Seed: 1}); err == nil {
					s := *ix.searcher
					s.Approx = h
					approx := *ix
					approx.searcher = &s
					c.built.CompareAndSwap(ix, &approx) // fails when a newer catalogue came
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
func (c *content) vector(f map[string]float64) ([]float64, error) {
	v := make([]float64, len(c.names))
	known := 0
	for k, n := range c.names {
		if x, ok := f[n]; ok {
			v[k] = x
			known++
		}
	}
	if known == 0 {
		return nil, api.FieldError("features", fmt.Sprintf("none of the model's features are given (it knows %d, e.g. %q)", len(c.names), c.names[0]))
	}
	return v, nil
}

// contentSimilar answers by=content.
func (e *Engine) contentSimilar(ctx context.Context, c *catalogueCache, idx uint32, n int) ([]api.ScoredItem, *content, error) {
	cm := e.content.Load()
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
	cm := e.content.Load()
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
	return &api.SimilarItems{By: "content", Model: ContentModelName, ModelVersion: cm.info.Version, Items: scored(c.cat, ix, nbs)}, nil
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

// coldStart fills up to slots of a recommendation list with cold items
// (features, no interactions) nearest in content to the user's history, so
// they reach users before anyone has consumed them. Each carries as reason
// the history item it is closest to.
func (e *Engine) coldStart(ctx context.Context, c *catalogueCache, prof api.Profile, skip func(uint32) bool, slots int) []api.ScoredItem {
	cm := e.content.Load()
	if cm == nil || slots <= 0 || len(prof.Positive) == 0 {
		return nil
	}
	ix, err := cm.index(ctx, c.itemsVersion)
	if err != nil {
		return nil
	}
	cs := e.coldSet(c, ix)
	if len(cs.ids) == 0 {
		return nil
	}
	type cand struct {
		item, reason uint32
		dist         float64
	}
	best := map[uint32]cand{}
	hist := prof.Positive
	if len(hist) > 20 {
		hist = hist[len(hist)-20:]
	}
	var eligible []int // positions in cs.ids of the cold items this request may get
	near := make([]retrieval.Neighbour, 0, slots)
	for _, j := range hist {
		id, ok := ix.byItem[j]
		if !ok {
			continue
		}
		// The slots cold items nearest to j that the request may get, as
		// the exact search of the whole index would rank them: from j's
		// cached list, or, when the filter leaves too few of a truncated
		// list, from all cold items.
		list := cs.nearestTo(ix, id)
		near = near[:0]
		for _, nb := range list.nbs {
			if len(near) == slots {
				break
			}
			if !skip(ix.items[nb.ID]) {
				near = append(near, nb)
			}
		}
		if len(near) < slots && !list.all {
			if eligible == nil {
				eligible = make([]int, 0, len(cs.ids))
				for k, cid := range cs.ids {
					if !skip(ix.items[cid]) {
						eligible = append(eligible, k)
					}
				}
			}
			q := ix.searcher.Index.Vector(id)
			near = near[:0]
			for _, k := range eligible {
				if cid := cs.ids[k]; cid != id {
					near = keepNearest(near, retrieval.Neighbour{ID: cid, Distance: retrieval.SquaredDistance(q, cs.vecs[k])}, slots)
				}
			}
		}
		for _, nb := range near {
			i := ix.items[nb.ID]
			if b, ok := best[i]; !ok || nb.Distance < b.dist {
				best[i] = cand{item: i, reason: j, dist: nb.Distance}
			}
		}
	}
	cands := make([]cand, 0, len(best))
	for _, b := range best {
		cands = append(cands, b)
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return int(math.Copysign(1, a.dist-b.dist))
		}
		return int(a.item) - int(b.item)
	})
	var out []api.ScoredItem
	for _, cd := range cands[:min(slots, len(cands))] {
		out = append(out, api.ScoredItem{ItemID: c.cat.ItemIDs[cd.item], Score: 0,
			Reasons: []api.Reason{{Kind: "item", ID: c.cat.ItemIDs[cd.reason], Weight: 1 / (1 + cd.dist)}}})
	}
	return out
}

// coldItems are the indexed items with no interactions in one catalogue,
// with their projected vectors: the only candidates of coldStart. Building
// it once per catalogue and content index spares every request a scan of
// the whole index per history item, and each item's nearest cold items are
// found once, at the first request that needs them.
type coldItems struct {
	cat     *catalogueCache
	ix      *contentIndex
	ids     []int // index ids
	vecs    [][]float64
	nearest []atomic.Pointer[coldList] // by index id
}

// coldList holds the cold items nearest to one item in (distance, id)
// order; all tells whether it holds every cold item but the item itself.
type coldList struct {
	nbs []retrieval.Neighbour
	all bool
}

// coldListLen bounds each cached list: enough for the one slot per ten of
// a list of up to 100 items after the request's filter.
const coldListLen = 32

// nearestTo returns the cached cold list of index id, computing it first.
func (cs *coldItems) nearestTo(ix *contentIndex, id int) *coldList {
	if l := cs.nearest[id].Load(); l != nil {
		return l
	}
	q := ix.searcher.Index.Vector(id)
	l := &coldList{nbs: make([]retrieval.Neighbour, 0, min(coldListLen, len(cs.ids))), all: true}
	for k, cid := range cs.ids {
		if cid == id {
			continue
		}
		if len(l.nbs) == coldListLen {
			l.all = false
		}
		l.nbs = keepNearest(l.nbs, retrieval.Neighbour{ID: cid, Distance: retrieval.SquaredDistance(q, cs.vecs[k])}, coldListLen)
	}
	cs.nearest[id].Store(l)
	return l
}

// coldSet returns the cold items of catalogue c under index ix. A new
// catalogue with the same cold items (popularity is rebuilt every few
// seconds under ingest) keeps the cached lists. Two requests may build it
// at once after a change; both builds are equal.
func (e *Engine) coldSet(c *catalogueCache, ix *contentIndex) *coldItems {
	old := e.cold.Load()
	if old != nil && old.cat == c && old.ix == ix {
		return old
	}
	var ids []int
	for k, i := range ix.items {
		if int(i) < len(c.cat.Popularity) && c.cat.Popularity[i] == 0 && !hiddenOrGone(c.cat, i) {
			ids = append(ids, k)
		}
	}
	cs := &coldItems{cat: c, ix: ix, ids: ids}
	if old != nil && old.ix == ix && slices.Equal(old.ids, ids) {
		cs.vecs, cs.nearest = old.vecs, old.nearest
	} else {
		cs.nearest = make([]atomic.Pointer[coldList], len(ix.items))
		for _, k := range ids {
			cs.vecs = append(cs.vecs, ix.searcher.Index.Vector(k))
		}
	}
	e.cold.Store(cs)
	return cs
}

// keepNearest inserts nb into near, the at most k nearest so far in
// increasing (distance, id) order: the order of retrieval.Index's search.
func keepNearest(near []retrieval.Neighbour, nb retrieval.Neighbour, k int) []retrieval.Neighbour {
	less := func(a, b retrieval.Neighbour) bool {
		return a.Distance < b.Distance || a.Distance == b.Distance && a.ID < b.ID
	}
	if len(near) == k && !less(nb, near[k-1]) {
		return near
	}
	if len(near) < k {
		near = append(near, nb)
	}
	p := len(near) - 1
	for ; p > 0 && less(nb, near[p-1]); p-- {
		near[p] = near[p-1]
	}
	near[p] = nb
	return near
}

// InstallContent serves a content metric.
func (e *Engine) InstallContent(info api.ModelInfo, names []string, m *retrieval.Metric) {
	e.content.Store(&content{info: info, metric: m, names: names, features: e.src.ItemFeatures, approxAbove: e.opts.ContentApproxAbove})
}

// coldShare is the share of a recommendation list offered to cold items.
const coldShare = 10

// withColdItems lets cold items (features, no interactions) into the last
// slots of a list of at least 5: one slot per 10 (SPEC.md §5 cold start).
func (e *Engine) withColdItems(ctx context.Context, c *catalogueCache, prof api.Profile, req api.RecommendRequest, items []api.ScoredItem) []api.ScoredItem {
	if req.N < 5 || e.content.Load() == nil {
		return items
	}
	slots := max(1, req.N/coldShare)
	skip := newFilter(c.cat, prof, req)
	cold := e.coldStart(ctx, c, prof, skip, slots)
	if len(cold) == 0 {
		return items
	}
	keep := min(len(items), req.N-len(cold))
	out := append(items[:keep:keep], cold...)
	last := 0.0
	if keep > 0 {
		last = out[keep-1].Score
	}
	for k := keep; k < len(out); k++ {
		out[k].Score = last // keeps the list non-increasing
	}
	return out
}

// hybridSimilar merges the collaborative and content neighbours: each list's
// scores are divided by its best, and an item's score is the mean of the two
// (0 where a list lacks it).
func (e *Engine) hybridSimilar(ctx context.Context, c *catalogueCache, idx uint32, req api.SimilarRequest) (*api.SimilarItems, error) {
	collab, errC := e.Similar(ctx, api.SimilarRequest{ItemID: req.ItemID, N: req.N * 2, By: "collaborative"})
	cont, cm, errT := e.contentSimilar(ctx, c, idx, req.N*2)
	if errC != nil && errT != nil {
		return nil, errT
	}
	merged := map[string]float64{}
	add := func(items []api.ScoredItem) {
		if len(items) == 0 || items[0].Score <= 0 {
			return
		}
		for _, it := range items {
			merged[it.ItemID] += 0.5 * it.Score / items[0].Score
		}
	}
	out := &api.SimilarItems{ItemID: req.ItemID, By: "hybrid", Items: []api.ScoredItem{}}
	if errC == nil {
		add(collab.Items)
		out.Model, out.ModelVersion = collab.Model, collab.ModelVersion
	}
	if errT == nil {
		add(cont)
		out.Model += "+" + ContentModelName
		out.ModelVersion += "+" + cm.info.Version
		out.Model = strings.TrimPrefix(out.Model, "+")
		out.ModelVersion = strings.TrimPrefix(out.ModelVersion, "+")
	}
	for id, sc := range merged {
		out.Items = append(out.Items, api.ScoredItem{ItemID: id, Score: sc})
	}
	slices.SortFunc(out.Items, func(a, b api.ScoredItem) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return strings.Compare(a.ItemID, b.ItemID)
	})
	out.Items = out.Items[:min(req.N, len(out.Items))]
	return out, nil
}
