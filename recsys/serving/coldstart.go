package serving

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync/atomic"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/retrieval"
)

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
// kind) nearest in content to the user's recent history and within the
// content model's distance threshold, nearest first, and the content index
// they were measured in (nil when there is none).
func (e *Engine) coldStart(ctx context.Context, c *catalogueCache, prof api.Profile, skip func(uint32) bool, slots int) ([]coldPick, *contentIndex, error) {
	cm := e.contentSearch()
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
	maxDist := cm.model.MaxColdDistance()
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
			if nb.Distance > maxDist {
				break // near is in increasing distance
			}
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

// coldItems are the indexed items with no events and with evidence in one
// catalogue, with their cold-slot vectors: the only candidates of
// coldStart. Building it once per catalogue and content index spares every
// request a scan of the whole index per history item, and each item's
// nearest cold items are found once, at the first request that needs them.
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

// maxColdItems bounds the cold items a catalogue offers to cold slots:
// the newest of them, those last to enter the catalogue. A request
// measures each item of its recent history against every cold item the
// first time that item is asked for, so the cost of a request grows with
// this number; a long-tail catalogue of a million items can hold tens of
// thousands of items with features and no events (61,621 in the 20M × 1M
// scale data), where the scans took 92% of the serving CPU and a request
// 100 ms. Cold start is for new
// arrivals, and the newest are those.
var maxColdItems = 4096

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
	worst := math.Inf(1) // the list's last distance once it is full
	for k, cid := range cs.ids {
		if cid == id {
			continue
		}
		d := retrieval.SquaredDistanceWithin(q, cs.vecs[k], worst)
		if len(l.nbs) == coldListLen {
			l.all = false
			if d > worst {
				continue // keepNearest would not take it
			}
		}
		l.nbs = keepNearest(l.nbs, retrieval.Neighbour{ID: cid, Distance: d}, coldListLen)
		if len(l.nbs) == coldListLen {
			worst = l.nbs[coldListLen-1].Distance
		}
	}
	cs.nearest[id].Store(l)
	return l
}

// coldSet returns the cold items of catalogue c under index ix: indexed,
// live, with evidence (a nonzero feature that enough known items share,
// contentIndex.evidence), and with no event of any kind. An item with
// events but no positive one (rated, all ratings low) has popularity 0
// too, but it is known and unwanted, not unknown: the store's per-item
// pair index tells them apart, asked only for the indexed items of
// popularity 0. A new catalogue with
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
		if ix.evidence[k] && int(i) < len(c.cat.Popularity) && c.cat.Popularity[i] == 0 && !hiddenOrGone(c.cat, i) {
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
	if len(ids) > maxColdItems {
		// The newest: ix.items is in dense index order, the order items
		// entered the catalogue.
		ids = ids[len(ids)-maxColdItems:]
	}
	cs := &coldItems{cat: c, ix: ix, ids: ids}
	if old != nil && old.ix == ix && slices.Equal(old.ids, ids) {
		cs.vecs, cs.nearest = old.vecs, old.nearest
	} else {
		cs.nearest = make([]atomic.Pointer[coldList], len(ix.items))
		for _, k := range ids {
			v, ok := ix.coldVecs[k]
			if !ok {
				v = ix.searcher.Index.Vector(k)
			}
			cs.vecs = append(cs.vecs, v)
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
// its slot on evidence the catalogue supports (docs/design.md#cold-start).
// It must have a nonzero feature that at least content.MinColdSupport of the items
// the metric was learned on have, and it is placed by such features alone;
// its distance to the user's recent history must be at most the content
// model's threshold, chosen on validation when the metric was learned.
// Then it has to earn the slot on the content scale: the k-th cold item
// (nearest first) takes the place of the warm item it would push out (the
// lowest one still in the list) only if its distance to the user's recent
// history under the learned metric is at most that warm item's distance
// to the same history. Both numbers measure the one thing both items
// have, closeness in features to what the user liked; a warm item the
// model ranked there for reasons content cannot see is displaced only by
// a cold item at least as close to the user's taste, and a warm item
// without features (no place in content space to compare) is never
// displaced. Once a cold item fails, the next ones (no nearer) would face
// the same warm item and fail too. Empty slots, when the model found
// fewer than n items, go to cold items within the threshold: they
// displace nothing.
//
// A cold item's score is its content similarity 1/(1+d), d the squared
// distance to the nearest history item, as by=content reports it; it is
// flagged cold so that nobody compares it with the model scores above it.
// Its reason (that history item) is attached only with explain=true.
func (e *Engine) withColdItems(ctx context.Context, c *catalogueCache, prof api.Profile, req api.RecommendRequest, st *steer, items []api.ScoredItem) ([]api.ScoredItem, error) {
	slots := e.coldSlots(req.N)
	if slots == 0 || e.contentSearch() == nil {
		return items, nil
	}
	// An item the model already listed (a zero score pads a short list)
	// is not offered again.
	listed := make(map[uint32]bool, len(items))
	for _, it := range items {
		listed[c.cat.Index[it.ItemID]] = true
	}
	skip := newFilter(c.cat, prof, req, st.keepFunc())
	picks, ix, err := e.coldStart(ctx, c, prof, func(i uint32) bool { return listed[i] || skip(i) }, slots)
	if err != nil || len(picks) == 0 {
		return items, err
	}
	hist := recentHistory(prof)
	// Under a category cap a cold item needs room among the warm items
	// (all of them, those it displaces included) and the cold ones before it.
	capped := newCategoryCap(req.Diversity.MaxPerCategory, catalogueCategories(c))
	for _, it := range items {
		capped.admit(c.cat.Index[it.ItemID])
	}
	taken := make([]coldPick, 0, len(picks))
	for _, p := range picks {
		if len(items)+len(taken) >= req.N {
			warm := items[req.N-len(taken)-1]
			d, ok := historyDistance(ix, hist, c.cat.Index[warm.ItemID])
			if !ok || p.dist > d {
				break
			}
		}
		if capped.admit(p.item) {
			taken = append(taken, p)
		}
	}
	keep := min(len(items), req.N-len(taken))
	out := items[:keep:keep]
	for _, p := range taken {
		sim := 1 / (1 + p.dist)
		it := api.ScoredItem{ItemID: c.cat.ItemIDs[p.item], Score: sim, Cold: true}
		if req.Explain {
			it.Reasons = []api.Reason{{Kind: "item", ID: c.cat.ItemIDs[p.reason], Weight: sim}}
		}
		out = append(out, it)
	}
	return out, nil
}
