// Package serving answers the requests of the service from the trained
// models: recommendations with explanations and cold items, similar items
// (collaborative, content, hybrid) and search by example. It holds the
// served models (recommenders and the content metric alike, in one set
// swapped atomically), the catalogue and popularity caches, and the
// content index. Package jobs trains the models and hands them over with
// Engine.Install; the kinds of served model are registered by name
// (recsys.Register).
//
// Works cited in the comments are listed in docs/references.md.
package serving

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/rules"
)

// Source is what the engine reads from the store.
type Source interface {
	Profile(ctx context.Context, userID string) (api.Profile, error)
	Catalogue(ctx context.Context) (*api.Catalogue, error)
	Versions() (items, events uint64)
	UserIDs(ctx context.Context, idx []uint32) ([]string, error)
	ItemFeatures(ctx context.Context) ([]string, [][]float64, error)
	ItemAttributes(ctx context.Context) (*api.ItemAttributes, error)
	ItemsInteracted(ctx context.Context, idx []uint32) ([]bool, error)
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	// PopularityTTL bounds how stale the cached popularity may be after new
	// interactions; catalogue writes invalidate the cache at once.
	PopularityTTL time.Duration
	// ContentApproxAbove: a content catalogue with more items than this is
	// searched through an HNSW index instead of exactly (0 =
	// retrieval.DefaultApproxAbove, negative = always exact).
	ContentApproxAbove int
	// ColdSlotsPer10 is how many slots in ten of a recommendation list may
	// go to cold items, 0..10 (0 = DefaultColdSlotsPer10, negative = none);
	// see withColdItems for when a cold item earns one.
	ColdSlotsPer10 int
	// Now is the clock of the rules' campaigns and of the items' age
	// (nil: time.Now).
	Now func() time.Time
	// Logger receives what the engine reports of its own accord (how a
	// content model's HNSW graph was made); nil discards it.
	Logger *slog.Logger
}

// Engine answers recommendation requests from the active model, falling
// back to popularity. It is safe for concurrent use.
type Engine struct {
	src  Source
	opts EngineOptions

	cache     atomic.Pointer[catalogueCache]
	refreshMu sync.Mutex

	models atomic.Pointer[modelSet]
	swapMu sync.Mutex // serialises writers of models
	// ranking times each model's ranking of the catalogue for a request
	// (RankingMetric).
	ranking *prometheus.HistogramVec
	cold    atomic.Pointer[coldItems]
	// loadDone is closed when LoadPersistedAsync's goroutine ends; nil
	// without one.
	loadDone chan struct{}

	exprs        *rules.Cache
	filterErrors prometheus.Counter
	steering     atomic.Pointer[steerSet]
	steerMu      sync.Mutex // serialises LoadSteering's read-then-store
	attrs        atomic.Pointer[itemAttributes]
	attrsMu      sync.Mutex // serialises readers of attrs from the source
}

// catalogueCache is an immutable catalogue with its popularity order.
type catalogueCache struct {
	cat           *api.Catalogue
	byPopularity  []uint32 // live items, most popular first, ties by index
	blocked       []uint32 // deleted or hidden items: never recommended
	pop32         []uint32 // popularity per index, the models' tie-breaker
	itemsVersion  uint64
	eventsVersion uint64
	builtAt       time.Time
}

// NewEngine returns an engine reading from src.
func NewEngine(src Source, opts EngineOptions) *Engine {
	if opts.PopularityTTL == 0 {
		opts.PopularityTTL = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{src: src, opts: opts, ranking: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "recsys_recommend_ranking_seconds",
		Help:    "Time a model takes to rank the catalogue for one recommendation request (scoring, filtering and selection; not the history read), by model.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
	}, []string{"model"}),
		exprs: rules.NewCache(rules.DefaultCacheSize),
		filterErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "recsys_filter_errors_total",
			Help: "Evaluations of a filter expression or rule condition that failed on one item at run time; the item was left out (a filter or exclude rule) or not changed (boost, bury, pin)."})}
	if e.opts.Now == nil {
		e.opts.Now = time.Now
	}
	e.models.Store(&modelSet{byName: map[string]*Served{}})
	return e
}

// timeRanking observes the time since start as a ranking by model.
func (e *Engine) timeRanking(model string, start time.Time) {
	e.ranking.WithLabelValues(model).Observe(time.Since(start).Seconds())
}

// FilterErrorsMetric is the counter of recsys_filter_errors_total, to
// register with the server's others.
func (e *Engine) FilterErrorsMetric() prometheus.Collector { return e.filterErrors }

func (e *Engine) now() time.Time { return e.opts.Now() }

// RankingMetric is the histogram of recsys_recommend_ranking_seconds, to
// register with the server's others: at scale, the cost of a request
// depends on the model (a user-based model searches every user), and this
// says which model a slow tail comes from.
func (e *Engine) RankingMetric() prometheus.Collector { return e.ranking }

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
		byPopularity: popularityOrder(cat), pop32: make([]uint32, len(cat.Popularity))}
	for i, p := range cat.Popularity {
		c.pop32[i] = uint32(min(p, math.MaxUint32))
	}
	for i, id := range cat.ItemIDs {
		if id == "" || cat.Hidden[i] {
			c.blocked = append(c.blocked, uint32(i))
		}
	}
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

// Recommend answers GET /users/{id}/recommendations and POST
// /recommendations: from the requested model, else the active one, from
// the user's live history or the request's anonymous one. With no trained
// model, or for a history with no positive item, it falls back to
// popularity and says so. A page at Offset is a slice of the list of
// Offset+N items, cold items included, so pages never overlap or skip.
func (e *Engine) Recommend(ctx context.Context, req api.RecommendRequest) (*api.Recommendations, error) {
	set := e.models.Load()
	name, m, err := set.pick(req.Model)
	if err != nil {
		return nil, err
	}
	c, err := e.catalogue(ctx)
	if err != nil {
		return nil, err
	}
	out := &api.Recommendations{UserID: req.UserID}
	var prof api.Profile
	if req.History != nil {
		out.UserID = ""
		prof, out.UnknownItems = historyProfile(c.cat, req.History)
	} else if prof, err = e.src.Profile(ctx, req.UserID); err != nil {
		return nil, err
	}
	st, err := e.newSteer(ctx, c, req.Steer, req.Explain)
	if err != nil {
		return nil, err
	}
	page := req
	page.N = req.Offset + req.N
	if m != nil && len(prof.Positive) > 0 {
		out.Model, out.ModelVersion = m.Info.Name, m.Info.Version
		top, err := e.rankedList(ctx, c, m, page, st, func(k int) []Candidate {
			p := page
			p.N = k
			return e.rankFrom(c, m, prof, p, st)
		})
		if err != nil {
			return nil, err
		}
		out.Items = scoredItems(c, top)
		if req.Explain {
			if err := e.explain(ctx, c, m, prof, out.Items); err != nil {
				return nil, err
			}
			withRules(c, out.Items, st)
		}
		if out.Items, err = e.withColdItems(ctx, c, prof, page, st, out.Items); err != nil {
			return nil, err
		}
		out.Items = out.Items[min(req.Offset, len(out.Items)):]
		return out, nil
	}
	out.Model, out.Fallback = recsys.PopularModel, recsys.PopularModel
	if name == recsys.PopularModel {
		out.Fallback = ""
		if m != nil {
			out.ModelVersion = m.Info.Version
		}
	}
	defer e.timeRanking(recsys.PopularModel, time.Now())
	skip := newFilter(c.cat, prof, req, st.keepFunc())
	top, err := e.rankedList(ctx, c, nil, page, st, func(k int) []Candidate {
		top := make([]Candidate, 0, k)
		for _, i := range c.byPopularity {
			if len(top) == k {
				break
			}
			if !skip(i) {
				top = append(top, Candidate{Item: i, Score: float64(c.cat.Popularity[i])})
			}
		}
		return top
	})
	if err != nil {
		return nil, err
	}
	top = top[min(req.Offset, len(top)):]
	out.Items = scoredItems(c, top)
	if req.Explain {
		withRules(c, out.Items, st)
	}
	return out, nil
}

// rankedList is the list of req.N items (Offset included) that a ranking
// answers, reordered by the rules of st and then diversified as
// req.Diversity asks: fetch(k) returns the ranking's first k candidates
// (st's filters applied), and m (nil for popularity) gives the item
// similarity of MMR.
func (e *Engine) rankedList(ctx context.Context, c *catalogueCache, m *Served, req api.RecommendRequest, st *steer, fetch func(k int) []Candidate) ([]Candidate, error) {
	ranked := st.steered(func(k int) ([]Candidate, error) { return fetch(k), nil })
	if !req.Diversity.On() {
		return ranked(req.N)
	}
	var sim func([]Candidate) func(a, b int) float64
	if req.Diversity.Lambda != nil {
		var err error
		if sim, err = e.similarityOf(ctx, c, m); err != nil {
			return nil, err
		}
	}
	return diversified(diversifyOptions(c, req.Diversity, req.N, sim), len(c.cat.ItemIDs), ranked)
}

// scoredItems names the candidates of catalogue c.
func scoredItems(c *catalogueCache, cands []Candidate) []api.ScoredItem {
	out := make([]api.ScoredItem, 0, len(cands))
	for _, x := range cands {
		out = append(out, api.ScoredItem{ItemID: c.cat.ItemIDs[x.Item], Score: x.Score})
	}
	return out
}

// pick resolves the model a request names (empty: the active one) to a
// served recommender; m is nil when popularity answers.
func (s *modelSet) pick(model string) (name string, m *Served, err error) {
	name = model
	if name == "" {
		name = s.active
	}
	switch {
	case name == recsys.PopularModel:
		return name, s.recommender(recsys.PopularModel), nil
	case name == "":
		return name, nil, nil
	}
	if m = s.recommender(name); m != nil {
		return name, m, nil
	}
	if s.loading[name] {
		return "", nil, api.ModelLoading(name)
	}
	if _, err := recsys.KindOf(name); err == nil && !recsys.Recommends(name) {
		return "", nil, api.FieldError("model", fmt.Sprintf("%q is not a recommender: it ranks items by feature similarity to one item or vector; use GET /items/{id}/similar?by=content or POST /search/similar (recommenders: %s)", name, strings.Join(recsys.Names(), ", ")))
	}
	if !recsys.Recommends(name) {
		return "", nil, api.FieldError("model", fmt.Sprintf("unknown model %q (known: %s)", name, strings.Join(recsys.Names(), ", ")))
	}
	return "", nil, api.Errorf(api.CodeModelNotReady, "model %q is not trained yet; POST /admin/retrain", name)
}

// historyProfile is the profile of an anonymous history: its items in the
// catalogue, hidden ones included as in a stored user's, all positive and
// all consumed; the other ids are returned as unknown, in request order.
func historyProfile(cat *api.Catalogue, ids []string) (api.Profile, []string) {
	var prof api.Profile
	var unknown []string
	seen := map[string]bool{}
	for _, id := range ids {
		i, ok := cat.Index[id]
		if !ok || int(i) >= len(cat.ItemIDs) || cat.ItemIDs[i] == "" {
			if !seen[id] {
				seen[id] = true
				unknown = append(unknown, id)
			}
			continue
		}
		prof.Positive = append(prof.Positive, i)
	}
	slices.Sort(prof.Positive)
	prof.Positive = slices.Compact(prof.Positive)
	prof.Consumed = prof.Positive
	return prof, unknown
}

// newFilter returns the test for items a request must not get: deleted,
// hidden, outside the categories, negative for the user, consumed,
// excluded by the request, or not kept by keep (a request's filter
// expressions and exclude rules; nil keeps all), which is asked last.
func newFilter(cat *api.Catalogue, prof api.Profile, req api.RecommendRequest, keep func(uint32) bool) func(uint32) bool {
	excluded := excludedItems(cat, prof, req)
	return func(i uint32) bool {
		if int(i) >= len(cat.ItemIDs) || cat.ItemIDs[i] == "" || cat.Hidden[i] {
			return true
		}
		if _, ok := slices.BinarySearch(excluded, i); ok {
			return true
		}
		if len(req.Categories) > 0 && !inAny(cat.Categories[i], req.Categories) {
			return true
		}
		return keep != nil && !keep(i)
	}
}

// inAny reports whether one of cats is among want.
func inAny(cats, want []string) bool {
	for _, c := range cats {
		if slices.Contains(want, c) {
			return true
		}
	}
	return false
}

// excludedItems lists, sorted, the items the user's profile and the
// request leave out: the negative ones, or every consumed one, and those
// of req.Exclude. Consumed includes the negative items; both are sorted by
// index, so a binary search replaces a per-request hash set.
func excludedItems(cat *api.Catalogue, prof api.Profile, req api.RecommendRequest) []uint32 {
	excluded := prof.Negative
	if req.ExcludeConsumed {
		excluded = prof.Consumed
	}
	if !slices.IsSorted(excluded) {
		excluded = slices.Sorted(slices.Values(excluded))
	}
	if len(req.Exclude) == 0 {
		return excluded
	}
	excluded = slices.Clone(excluded)
	for _, id := range req.Exclude {
		if i, ok := cat.Index[id]; ok {
			excluded = append(excluded, i)
		}
	}
	slices.Sort(excluded)
	return slices.Compact(excluded)
}

// Similar answers GET /items/{id}/similar. Collaborative similarity comes
// from the item neighbour lists of the active model, or of any served model
// that keeps them (itemknn, kunn, kunn-i, slim).
//
// Excluded items are left out of the answer for n plus their number: each
// answer for n is the first n of the answer for any larger n (with the
// approximate content index, nearly so).
func (e *Engine) Similar(ctx context.Context, req api.SimilarRequest) (*api.SimilarItems, error) {
	c, err := e.catalogue(ctx)
	if err != nil {
		return nil, err
	}
	idx, ok := c.cat.Index[req.ItemID]
	if !ok {
		return nil, api.Errorf(api.CodeNotFound, "item %q not found", req.ItemID)
	}
	drop := map[string]bool{}
	for _, id := range req.Exclude {
		if _, ok := c.cat.Index[id]; ok {
			drop[id] = true
		}
	}
	st, err := e.newSteer(ctx, c, req.Steer, req.Explain)
	if err != nil {
		return nil, err
	}
	if req.Diversity.On() || st != nil {
		return e.similarDiversified(ctx, c, idx, req, drop, st)
	}
	wide := req
	wide.N += len(drop)
	out, err := e.similar(ctx, c, idx, wide)
	if err != nil || len(drop) == 0 {
		return out, err
	}
	out.Items = slices.DeleteFunc(out.Items, func(it api.ScoredItem) bool { return drop[it.ItemID] })
	out.Items = out.Items[:min(req.N, len(out.Items))]
	return out, nil
}

// similarDiversified answers a similar-items request that asks for
// diversity, filters or rules: the similar items, excluded and filtered
// ones left out, are the ranking that the rules reorder and Diversify
// shortens and reorders, their similarity to the item the relevance. MMR
// compares two of them by the similarity by=content answers for
// by=content, else by the collaborative one (similarityOf).
func (e *Engine) similarDiversified(ctx context.Context, c *catalogueCache, idx uint32, req api.SimilarRequest, drop map[string]bool, st *steer) (*api.SimilarItems, error) {
	var sim func([]Candidate) func(a, b int) float64
	if req.Diversity.Lambda != nil {
		var err error
		if req.By == "content" {
			sim, err = e.contentSimilarity(ctx, c)
		} else {
			sim, err = e.similarityOf(ctx, c, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	var out *api.SimilarItems
	total := len(c.cat.ItemIDs)
	keep := st.keepFunc()
	ranked := st.steered(func(k int) ([]Candidate, error) {
		// Asks for more until k are left after the filters, or the
		// source has no more.
		for w := k + len(drop); ; w = min(4*w, total+len(drop)) {
			wide := req
			wide.N = w
			res, err := e.similar(ctx, c, idx, wide)
			if err != nil {
				return nil, err
			}
			out = res
			ranked := make([]Candidate, 0, len(res.Items))
			for _, it := range res.Items {
				i := c.cat.Index[it.ItemID]
				if !drop[it.ItemID] && (keep == nil || keep(i)) {
					ranked = append(ranked, Candidate{Item: i, Score: it.Score})
				}
			}
			if len(ranked) >= k || len(res.Items) < w || w >= total+len(drop) {
				return ranked[:min(k, len(ranked))], nil
			}
		}
	})
	var list []Candidate
	var err error
	if req.Diversity.On() {
		list, err = diversified(diversifyOptions(c, req.Diversity, req.N, sim), total, ranked)
	} else {
		list, err = ranked(req.N)
	}
	if err != nil {
		return nil, err
	}
	out.Items = scoredItems(c, list)
	if req.Explain {
		withRules(c, out.Items, st)
	}
	return out, nil
}

// similar answers req for the item at idx of catalogue c.
func (e *Engine) similar(ctx context.Context, c *catalogueCache, idx uint32, req api.SimilarRequest) (*api.SimilarItems, error) {
	if req.By == "content" {
		items, cm, err := e.contentSimilar(ctx, c, idx, req.N)
		if err != nil {
			return nil, err
		}
		return &api.SimilarItems{ItemID: req.ItemID, By: req.By, Model: cm.served.Info.Name, ModelVersion: cm.served.Info.Version, Items: items}, nil
	}
	if req.By == "hybrid" {
		return e.hybridSimilar(ctx, c, idx, req)
	}
	return e.collaborativeSimilar(c, idx, req)
}

// collaborativeSimilar answers by=collaborative from catalogue c.
func (e *Engine) collaborativeSimilar(c *catalogueCache, idx uint32, req api.SimilarRequest) (*api.SimilarItems, error) {
	m, nb := e.neighbourModel()
	if nb == nil {
		return nil, api.Errorf(api.CodeModelNotReady, "no collaborative similarity model is trained yet; POST /admin/retrain or run `recsys train`")
	}
	out := &api.SimilarItems{ItemID: req.ItemID, By: req.By, Model: m.Info.Name, ModelVersion: m.Info.Version,
		Items: []api.ScoredItem{}}
	for _, n := range nb.Similar(idx) {
		if len(out.Items) == req.N {
			break
		}
		j := n.Index
		if int(j) >= len(c.cat.ItemIDs) || c.cat.ItemIDs[j] == "" || c.cat.Hidden[j] || j == idx {
			continue
		}
		out.Items = append(out.Items, api.ScoredItem{ItemID: c.cat.ItemIDs[j], Score: n.Value})
	}
	return out, nil
}

// neighbourModel picks the model whose item lists answer similar items:
// the active one if it has them, else the first served of the registry's
// preference (recsys.SimilarFallbacks).
func (e *Engine) neighbourModel() (*Served, recsys.ItemNeighbourhood) {
	set := e.models.Load()
	for _, name := range append([]string{set.active}, recsys.SimilarFallbacks()...) {
		if m := set.byName[name]; m != nil {
			if nb, ok := m.Model.(recsys.ItemNeighbourhood); ok {
				return m, nb
			}
		}
	}
	return nil, nil
}

// Ready reports whether the engine can answer: the catalogue loads and
// no model of the start is still loading (LoadPersistedAsync). Requests
// that name no model are answered before that; a balancer that waits for
// readiness sends none while the loads share the cores with them.
func (e *Engine) Ready(ctx context.Context) error {
	if _, err := e.catalogue(ctx); err != nil {
		return err
	}
	if names := e.LoadingNames(); len(names) > 0 {
		return &api.Error{Code: api.CodeModelNotReady, RetryAfter: 1,
			Message: fmt.Sprintf("%d of the persisted models still loading (%s); requests that name no model are answered meanwhile", len(names), strings.Join(names, ", "))}
	}
	return nil
}

// scoreBuffers recycles per-request score vectors.
var scoreBuffers = sync.Pool{New: func() any { return new([]float64) }}

// rankFrom ranks the catalogue for a user with model m: a model that
// finds its top n itself (recsys.AsTopRanker: the item-based models and
// the sparse EASE) skips most of the catalogue; the others score every
// item.
func (e *Engine) rankFrom(c *catalogueCache, m *Served, prof api.Profile, req api.RecommendRequest, st *steer) []Candidate {
	defer e.timeRanking(m.Info.Name, time.Now())
	bufp := scoreBuffers.Get().(*[]float64)
	defer scoreBuffers.Put(bufp)
	n := len(c.cat.ItemIDs)
	if cap(*bufp) < n {
		*bufp = make([]float64, n)
	}
	scores := (*bufp)[:n]
	var top []uint32
	model := m.Model.(recsys.Model)
	if recsys.Decays(model) && len(prof.PositiveDays) == len(prof.Positive) {
		// A half-life weighs each history item by its age, as training
		// validated it; the ranked index holds unweighted bounds, so the
		// whole catalogue is scored.
		recsys.ScoreDecayed(model, -1, prof.Positive, prof.PositiveDays, scores)
		filterScores(c, prof, req, scores)
		top = recsys.TopNKeep(scores, c.pop32, nil, st.keepFunc(), req.N)
	} else if r, ok := recsys.AsTopRanker(model); ok {
		top = r.RankTop(prof.Positive, c.pop32, newFilter(c.cat, prof, req, st.keepFunc()), req.N, scores)
	} else {
		model.Score(prof.Positive, scores)
		filterScores(c, prof, req, scores)
		top = recsys.TopNKeep(scores, c.pop32, nil, st.keepFunc(), req.N)
	}
	out := make([]Candidate, 0, len(top))
	for _, i := range top {
		out = append(out, Candidate{Item: i, Score: scores[i]})
	}
	return out
}

// filterScores sets −Inf on the items newFilter rejects, visiting only
// those it can reject unless categories are asked for: the deleted and
// hidden items (listed once per catalogue) and the user's.
func filterScores(c *catalogueCache, prof api.Profile, req api.RecommendRequest, scores []float64) {
	if len(req.Categories) > 0 {
		skip := newFilter(c.cat, prof, req, nil)
		for i := range scores {
			if skip(uint32(i)) {
				scores[i] = math.Inf(-1)
			}
		}
		return
	}
	for _, l := range [][]uint32{c.blocked, excludedItems(c.cat, prof, req)} {
		for _, i := range l {
			if int(i) < len(scores) {
				scores[i] = math.Inf(-1)
			}
		}
	}
}
