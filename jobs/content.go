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

// coldPick is a cold item offered to one user: its squared distance,
// under the learned metric, to the nearest item of the user's recent
// positive history, and that item.
type coldPick struct {
	item, reason uint32
	dist         float64
}

// recentHistory is the part of a user's positive history that cold items
// are measured against: at most 20 positives, those of the highest dense
// index (Profile.Positive is in index order), the items most recently
// added to the catalogue; it bounds a request's work.
func recentHistory(prof api.Profile) []uint32 {
	hist := prof.Positive
	if len(hist) > 20 {
		hist = hist[len(hist)-20:]
	}
	return hist
}

// coldStart returns up to slots cold items (features, no events of any
// kind) nearest in content to the user's recent history, nearest first,
// and the content index they were measured in (nil when there is none).
func (e *Engine) coldStart(ctx context.Context, c *catalogueCache, prof api.Profile, skip func(uint32) bool, slots int) ([]coldPick, *contentIndex, error) {
	cm := e.content.Load()
	if cm == nil || slots <= 0 || len(prof.Positive) == 0 {
		return nil, nil, nil
	}
	ix, err := cm.index(ctx, c.itemsVersion)
	if err != nil {
		return nil, nil, err
	}
	cs, err := e.coldSet(ctx, c, ix)
	if err != nil || len(cs.ids) == 0 {
		return nil, ix, err
	}
	best := map[uint32]coldPick{}
	var eligible []int // positions in cs.ids of the cold items this request may get
	near := make([]retrieval.Neighbour, 0, slots)
	for _, j := range recentHistory(prof) {
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
				best[i] = coldPick{item: i, reason: j, dist: nb.Distance}
			}
		}
	}
	picks := make([]coldPick, 0, len(best))
	for _, b := range best {
		picks = append(picks, b)
	}
	slices.SortFunc(picks, func(a, b coldPick) int {
		if a.dist != b.dist {
			return cmp.Compare(a.dist, b.dist)
		}
		return cmp.Compare(a.item, b.item)
	})
	return picks[:min(slots, len(picks))], ix, nil
}

// historyDistance is coldPick.dist for any indexed item: its squared
// distance to the nearest other item of the recent history. ok is false
// for an item without features, which has no place in content space.
func historyDistance(ix *contentIndex, hist []uint32, item uint32) (d float64, ok bool) {
	id, ok := ix.byItem[item]
	if !ok {
		return 0, false
	}
	q := ix.searcher.Index.Vector(id)
	d = math.Inf(1)
	for _, j := range hist {
		if h, ok := ix.byItem[j]; ok && h != id {
			d = min(d, retrieval.SquaredDistance(q, ix.searcher.Index.Vector(h)))
		}
	}
	return d, !math.IsInf(d, 1)
}

// coldItems are the indexed items with no events in one catalogue,
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

// coldListLen bounds each cached list: enough for the default one slot per
// ten of a list of up to 100 items after the request's filter; a request
// that needs more scans the cold items.
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

// coldSet returns the cold items of catalogue c under index ix: indexed,
// live, and with no event of any kind. An item with events but no positive
// one (rated, all ratings low) has popularity 0 too, but it is known and
// unwanted, not unknown: the store's per-item pair index tells them apart,
// asked only for the indexed items of popularity 0. A new catalogue with
// the same cold items (popularity is rebuilt every few seconds under
// ingest) keeps the cached lists. Two requests may build it at once after
// a change; both builds are equal.
func (e *Engine) coldSet(ctx context.Context, c *catalogueCache, ix *contentIndex) (*coldItems, error) {
	old := e.cold.Load()
	if old != nil && old.cat == c && old.ix == ix {
		return old, nil
	}
	var ks []int
	var unpopular []uint32
	for k, i := range ix.items {
		if int(i) < len(c.cat.Popularity) && c.cat.Popularity[i] == 0 && !hiddenOrGone(c.cat, i) {
			ks = append(ks, k)
			unpopular = append(unpopular, i)
		}
	}
	seen, err := e.src.ItemsInteracted(ctx, unpopular)
	if err != nil {
		return nil, err
	}
	var ids []int
	for n, k := range ks {
		if !seen[n] {
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
	return cs, nil
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

// DefaultColdSlotsPer10 is how many slots in ten of a recommendation list
// may go to cold items unless EngineOptions.ColdSlotsPer10 says otherwise.
const DefaultColdSlotsPer10 = 1

// coldSlots is how many of a list of n items may go to cold items: per10
// in ten, at least one, and none in a list shorter than 5 (docs/design.md#cold-start).
func (e *Engine) coldSlots(n int) int {
	per10 := cmp.Or(e.opts.ColdSlotsPer10, DefaultColdSlotsPer10)
	if per10 < 0 || n < 5 {
		return 0
	}
	return min(n, max(1, n*min(per10, 10)/10))
}

// withColdItems lets cold items (features, no events) into the last slots
// of a list, so that they reach users before anyone has consumed them.
//
// A cold item has no model score, only a content one, so it has to earn
// its slot on the content scale: the k-th cold item (nearest first) takes
// the place of the warm item it would push out (the lowest one still in
// the list) only if its distance to the user's recent history under the
// learned metric is at most that warm item's distance to the same
// history. Both numbers measure the one thing both items have, closeness
// in features to what the user liked; a warm item the model ranked there
// for reasons content cannot see is displaced only by a cold item at
// least as close to the user's taste, and a warm item without features
// (no place in content space to compare) is never displaced. Once a cold
// item fails, the next ones (no nearer) would face the same warm item and
// fail too. Empty slots, when the model found fewer than n items, go to
// cold items freely: they displace nothing.
//
// A cold item's score is its content similarity 1/(1+d), d the squared
// distance to the nearest history item, as by=content reports it; it is
// flagged cold so that nobody compares it with the model scores above it.
// Its reason (that history item) is attached only with explain=true.
func (e *Engine) withColdItems(ctx context.Context, c *catalogueCache, prof api.Profile, req api.RecommendRequest, items []api.ScoredItem) ([]api.ScoredItem, error) {
	slots := e.coldSlots(req.N)
	if slots == 0 || e.content.Load() == nil {
		return items, nil
	}
	// An item the model already listed (a zero score pads a short list)
	// is not offered again.
	listed := make(map[uint32]bool, len(items))
	for _, it := range items {
		listed[c.cat.Index[it.ItemID]] = true
	}
	skip := newFilter(c.cat, prof, req)
	picks, ix, err := e.coldStart(ctx, c, prof, func(i uint32) bool { return listed[i] || skip(i) }, slots)
	if err != nil || len(picks) == 0 {
		return items, err
	}
	hist := recentHistory(prof)
	taken := 0
	for _, p := range picks {
		if len(items)+taken >= req.N {
			warm := items[req.N-taken-1]
			d, ok := historyDistance(ix, hist, c.cat.Index[warm.ItemID])
			if !ok || p.dist > d {
				break
			}
		}
		taken++
	}
	keep := min(len(items), req.N-taken)
	out := items[:keep:keep]
	for _, p := range picks[:taken] {
		sim := 1 / (1 + p.dist)
		it := api.ScoredItem{ItemID: c.cat.ItemIDs[p.item], Score: sim, Cold: true}
		if req.Explain {
			it.Reasons = []api.Reason{{Kind: "item", ID: c.cat.ItemIDs[p.reason], Weight: sim}}
		}
		out = append(out, it)
	}
	return out, nil
}

// hybridDepth is how deep into each source's neighbour list by=hybrid
// looks. It is fixed, not derived from n, so that the merged ranking is
// the same for every n and each answer is a prefix of any longer one; a
// hybrid list therefore holds at most the items of two such lists.
const hybridDepth = 200

// hybridSimilar merges the collaborative and content neighbours, each taken
// to hybridDepth. Scores of the two sources are on unrelated scales, so
// each source votes with its rank instead: an item r places below the top
// of a list (r = how many items that list scores strictly higher, so tied
// items get the same vote) gets 1 − r/hybridDepth from it, 0 from a list
// that lacks it, and its score is the mean vote of the sources that
// answered. Equal scores are broken as every ranking here: by popularity,
// then by dense index (recsys.TopN).
func (e *Engine) hybridSimilar(ctx context.Context, c *catalogueCache, idx uint32, req api.SimilarRequest) (*api.SimilarItems, error) {
	collab, errC := e.collaborativeSimilar(c, idx, api.SimilarRequest{ItemID: req.ItemID, N: hybridDepth, By: "collaborative"})
	cont, cm, errT := e.contentSimilar(ctx, c, idx, hybridDepth)
	if errC != nil && errT != nil {
		return nil, errT
	}
	votes := map[string]float64{}
	sources := 0.0
	vote := func(items []api.ScoredItem) {
		sources++
		r := 0
		for k, it := range items {
			if k > 0 && it.Score != items[k-1].Score {
				r = k
			}
			votes[it.ItemID] += 1 - float64(r)/hybridDepth
		}
	}
	out := &api.SimilarItems{ItemID: req.ItemID, By: "hybrid", Items: []api.ScoredItem{}}
	if errC == nil {
		vote(collab.Items)
		out.Model, out.ModelVersion = collab.Model, collab.ModelVersion
	}
	if errT == nil {
		vote(cont)
		out.Model += "+" + ContentModelName
		out.ModelVersion += "+" + cm.info.Version
		out.Model = strings.TrimPrefix(out.Model, "+")
		out.ModelVersion = strings.TrimPrefix(out.ModelVersion, "+")
	}
	for id, v := range votes {
		out.Items = append(out.Items, api.ScoredItem{ItemID: id, Score: v / sources})
	}
	slices.SortFunc(out.Items, func(a, b api.ScoredItem) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		ia, ib := c.cat.Index[a.ItemID], c.cat.Index[b.ItemID]
		if pa, pb := c.cat.Popularity[ia], c.cat.Popularity[ib]; pa != pb {
			return cmp.Compare(pb, pa)
		}
		return cmp.Compare(ia, ib)
	})
	out.Items = out.Items[:min(req.N, len(out.Items))]
	return out, nil
}
