package serving

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/content"
	"github.com/recsys-engine/recsys/retrieval"
	"github.com/recsys-engine/recsys/storage"
)

// gatedStore holds back the model blobs of the gated names until their
// gate is closed, so a test sees the engine between the two parts of
// LoadPersistedAsync.
type gatedStore struct {
	*storage.Store
	gate map[string]chan struct{}
}

func (g *gatedStore) ModelBlob(ctx context.Context, name, version string) ([]byte, error) {
	if ch := g.gate[name]; ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Store.ModelBlob(ctx, name, version)
}

// persist stores m under a new version and returns its record.
func persist(tb testing.TB, st *storage.Store, name string, m recsys.Artefact) api.ModelInfo {
	tb.Helper()
	ctx := context.Background()
	v, err := st.NewModelVersion(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	info := api.ModelInfo{Name: name, Version: v, TrainedAt: time.Now()}
	blob, err := m.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.PutModel(ctx, info, blob); err != nil {
		tb.Fatal(err)
	}
	return info
}

// waitFor polls cond for up to 10 s.
func waitFor(cond func() bool) error {
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("condition not met in 10 s")
		}
	}
	return nil
}

// errRecorder collects what LoadPersistedAsync reports.
type errRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (r *errRecorder) report(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// A start serves the active model and the model similar items fall back
// to (the active userknn has no item lists) before it returns; the others
// load after, the content model first. Until then a request naming one gets
// model_not_ready with Retry-After and activating one changes nothing; a
// version a training installs meanwhile is not replaced by the older
// persisted one; a damaged newest version is reported and the older one
// served; at the end every model is served and none is loading.
func TestEngine_loadPersistedAsync(t *testing.T) {
	st := twoTastes(t)
	ctx := context.Background()
	user := persist(t, st, "userknn", fitModel(t, st, "userknn", recsys.Params{K: 2}))
	if _, ok := fitModel(t, st, "userknn", recsys.Params{K: 2}).(recsys.ItemNeighbourhood); ok {
		t.Fatal("userknn has item lists: the test needs an active model without them")
	}
	items := persist(t, st, "itemknn", fitItemKNN(t, st, 2))
	content := persist(t, st, content.Name, content.NewContent([]string{"x"}, retrieval.Euclidean([]float64{0}, []float64{1})))
	oldKunn := persist(t, st, "kunn-i", fitModel(t, st, "kunn-i", recsys.Params{K: 2}))
	if err := st.PutModel(ctx, api.ModelInfo{Name: "kunn-i", Version: "v999998", TrainedAt: time.Now()}, []byte("not a model")); err != nil {
		t.Fatal(err)
	}
	pop := persist(t, st, "popular", fitModel(t, st, "popular", recsys.Params{}))
	persist(t, st, "slim", fitModel(t, st, "slim", recsys.Params{K: 2, L1: 0.1, L2: 0.1}))
	if err := st.SetActiveModel(ctx, "userknn"); err != nil {
		t.Fatal(err)
	}

	gated := &gatedStore{Store: st, gate: map[string]chan struct{}{
		"kunn-i": make(chan struct{}), "popular": make(chan struct{}), "slim": make(chan struct{})}}
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	var rec errRecorder
	// GOMAXPROCS set by the program (as by go test -cpu) is put back as it was.
	procs := 1
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	if errs := eng.LoadPersistedAsync(ctx, gated, nil, rec.report); len(errs) != 0 {
		t.Fatalf("first load: %v", errs)
	}
	// On Linux the later loads run two at a time, each with one processor
	// more (backgroundThread).
	if want := procs + backgroundLoaders; runtime.GOOS == "linux" && waitFor(func() bool { return runtime.GOMAXPROCS(0) == want }) != nil {
		t.Fatalf("GOMAXPROCS %d while the later models load, want %d", runtime.GOMAXPROCS(0), want)
	}
	// The content model loads first of the later ones, its index with it.
	if err := waitFor(func() bool { return eng.Lookup(content.Name) != nil }); err != nil {
		t.Fatalf("content model: %v", err)
	}
	for _, want := range []api.ModelInfo{user, items, content} {
		if got := eng.Lookup(want.Name); got == nil || got.Info.Version != want.Version {
			t.Fatalf("%s after the first load: %v, want version %s", want.Name, got, want.Version)
		}
	}
	if a := eng.Active(); a == nil || a.Info.Name != "userknn" {
		t.Fatalf("active %v, want userknn", a)
	}
	var ae *api.Error
	if eng.LoadingCount() != 3 || !eng.Loading("kunn-i") || !eng.Loading("popular") || eng.Loading("itemknn") {
		t.Fatalf("loading %d (kunn-i %v, popular %v, itemknn %v), want kunn-i, popular and slim", eng.LoadingCount(), eng.Loading("kunn-i"), eng.Loading("popular"), eng.Loading("itemknn"))
	}
	// Not ready until every model is: readiness names those still loading.
	if err := eng.Ready(ctx); !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady || ae.RetryAfter != 1 ||
		!strings.Contains(ae.Message, "3 of the persisted models still loading (kunn-i, popular, slim)") {
		t.Fatalf("Ready while loading: %v, want model_not_ready naming kunn-i, popular and slim", err)
	}
	if got, err := eng.Similar(ctx, api.SimilarRequest{ItemID: "a", N: 2}); err != nil || got.Model != "itemknn" {
		t.Fatalf("similar while loading: %+v, %v; want itemknn's lists", got, err)
	}
	if got, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "p1", N: 2}); err != nil || got.Model != "userknn" {
		t.Fatalf("recommend while loading: %+v, %v; want userknn", got, err)
	}
	_, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "p1", N: 2, Model: "kunn-i"})
	if !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady || ae.RetryAfter != 1 {
		t.Fatalf("?model=kunn-i while loading: %v, want model_not_ready with Retry-After 1", err)
	}
	if err := eng.Activate("slim"); api.ErrorCode(err) != api.CodeModelNotReady || eng.Active().Info.Name != "userknn" {
		t.Fatalf("activating slim while loading: %v, active %s; want model_not_ready and userknn", err, eng.Active().Info.Name)
	}
	if _, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "p1", N: 2, Model: "ease"}); api.ErrorCode(err) != api.CodeModelNotReady || errors.As(err, &ae) && ae.RetryAfter != 0 {
		t.Fatalf("?model=ease (never trained): %v, want model_not_ready without Retry-After", err)
	}

	// A replica's Sync leaves the loading models to the load (it would
	// decode them a second time, and here wait on their held-back blobs).
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := eng.Sync(sctx, gated); err != nil || eng.LoadingCount() != 3 {
		t.Fatalf("Sync while loading: %v, %d loading; want nil and 3", err, eng.LoadingCount())
	}

	// A training installs popular while its persisted version waits.
	trained := &Served{Info: api.ModelInfo{Name: "popular", Version: "v999999"}, Model: fitModel(t, st, "popular", recsys.Params{})}
	eng.Install(trained, false)
	if eng.Loading("popular") {
		t.Fatal("popular still loading after a training installed it")
	}
	for _, ch := range gated.gate {
		close(ch)
	}
	if err := eng.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	if eng.LoadingCount() != 0 {
		t.Fatalf("%d still loading after WaitLoaded", eng.LoadingCount())
	}
	if err := eng.Ready(ctx); err != nil {
		t.Fatalf("Ready after the load: %v", err)
	}
	if runtime.GOMAXPROCS(0) != procs {
		t.Fatalf("GOMAXPROCS %d after the load, want %d again", runtime.GOMAXPROCS(0), procs)
	}
	if got := eng.Lookup("popular"); got != trained {
		t.Fatalf("popular %v after the load, want the trained %s, not the persisted %s", got.Info, trained.Info.Version, pop.Version)
	}
	if got := eng.Lookup("kunn-i"); got == nil || got.Info.Version != oldKunn.Version {
		t.Fatalf("kunn-i %v, want the older version %s in place of the damaged one", got, oldKunn.Version)
	}
	rec.mu.Lock()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0].Error(), "kunn-i v999998") {
		t.Fatalf("reported %v, want the damaged kunn-i v999998 alone", rec.errs)
	}
	rec.mu.Unlock()
	if got, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "p1", N: 2, Model: "slim"}); err != nil || got.Model != "slim" {
		t.Fatalf("?model=slim after the load: %+v, %v", got, err)
	}
	if err := eng.Activate("slim"); err != nil || eng.Active().Info.Name != "slim" {
		t.Fatalf("activating slim after the load: %v", err)
	}
}

// Cancelling the start's context stops the later loads: WaitLoaded
// returns, the models not loaded are neither served nor loading, and the
// first ones still serve. With an active model that has item lists, no
// other model loads first.
func TestEngine_loadPersistedAsyncCancelled(t *testing.T) {
	st := twoTastes(t)
	items := persist(t, st, "itemknn", fitItemKNN(t, st, 2))
	persist(t, st, "userknn", fitModel(t, st, "userknn", recsys.Params{K: 2}))
	persist(t, st, "slim", fitModel(t, st, "slim", recsys.Params{K: 2, L1: 0.1, L2: 0.1}))
	if err := st.SetActiveModel(context.Background(), "itemknn"); err != nil {
		t.Fatal(err)
	}
	gated := &gatedStore{Store: st, gate: map[string]chan struct{}{"userknn": make(chan struct{}), "slim": make(chan struct{})}}
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	var rec errRecorder
	if errs := eng.LoadPersistedAsync(ctx, gated, nil, rec.report); len(errs) != 0 {
		t.Fatal(errs)
	}
	defer func() {
		if len(rec.errs) != 0 {
			t.Errorf("reported %v: a cancelled load is not a load error", rec.errs)
		}
	}()
	if eng.LoadingCount() != 2 || eng.Lookup("slim") != nil {
		t.Fatalf("loading %d, slim %v: want userknn and slim both left to the goroutine", eng.LoadingCount(), eng.Lookup("slim"))
	}
	cancel()
	if err := eng.WaitLoaded(context.Background()); err != nil {
		t.Fatal(err)
	}
	if eng.LoadingCount() != 0 || eng.Lookup("userknn") != nil || eng.Lookup("slim") != nil {
		t.Fatalf("after cancelling: loading %d, userknn %v, slim %v", eng.LoadingCount(), eng.Lookup("userknn"), eng.Lookup("slim"))
	}
	if a := eng.Active(); a == nil || a.Info.Version != items.Version {
		t.Fatalf("active %v, want itemknn %s", a, items.Version)
	}
	if _, err := eng.Recommend(context.Background(), api.RecommendRequest{UserID: "p1", N: 2, Model: "slim"}); api.ErrorCode(err) != api.CodeModelNotReady {
		t.Fatalf("?model=slim after a cancelled load: %v, want model_not_ready (not trained here)", err)
	}
}

// When no version of the stored active model loads, the start answers as
// a full load did: the first recommender served becomes the active model,
// here userknn, loaded after the start (no model similar items fall back
// to is stored), and the first load's error says popularity answers
// until then; with a fallback stored (kunn-i), that one loads first,
// becomes active, and the error names it.
func TestEngine_loadPersistedAsyncActiveDamaged(t *testing.T) {
	for _, withFallback := range []bool{false, true} {
		st := twoTastes(t)
		ctx := context.Background()
		if err := st.PutModel(ctx, api.ModelInfo{Name: "kunn-u", Version: "v000001", TrainedAt: time.Now()}, []byte("not a model")); err != nil {
			t.Fatal(err)
		}
		want, answering := persist(t, st, "userknn", fitModel(t, st, "userknn", recsys.Params{K: 2})), "the popularity fallback"
		if withFallback {
			want = persist(t, st, "kunn-i", fitModel(t, st, "kunn-i", recsys.Params{K: 2}))
			answering = `"kunn-i" instead`
		}
		if err := st.SetActiveModel(ctx, "kunn-u"); err != nil {
			t.Fatal(err)
		}
		eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
		var rec errRecorder
		errs := eng.LoadPersistedAsync(ctx, st, nil, rec.report)
		if err := eng.WaitLoaded(ctx); err != nil {
			t.Fatal(err)
		}
		if len(errs) != 2 || !strings.Contains(errs[0].Error(), "kunn-u v000001") || !strings.Contains(errs[1].Error(), `"kunn-u" could not be loaded; answering from `+answering) {
			t.Fatalf("fallback %v: first load's errors %v, want the damaged kunn-u and the model answering instead", withFallback, errs)
		}
		if a := eng.Active(); a == nil || a.Info.Name != want.Name || a.Info.Version != want.Version {
			t.Fatalf("fallback %v: active %v, want %s %s", withFallback, a, want.Name, want.Version)
		}
		if got, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "p1", N: 2}); err != nil || got.Model != want.Name || got.Fallback != "" {
			t.Fatalf("fallback %v: recommend %+v, %v; want %s", withFallback, got, err, want.Name)
		}
	}
}

// The models named as also (a running experiment's arms) load with the
// active one; a name with no stored model is passed over.
func TestEngine_loadPersistedAsyncAlso(t *testing.T) {
	st := twoTastes(t)
	persist(t, st, "itemknn", fitItemKNN(t, st, 2))
	user := persist(t, st, "userknn", fitModel(t, st, "userknn", recsys.Params{K: 2}))
	persist(t, st, "slim", fitModel(t, st, "slim", recsys.Params{K: 2, L1: 0.1, L2: 0.1}))
	if err := st.SetActiveModel(context.Background(), "itemknn"); err != nil {
		t.Fatal(err)
	}
	gated := &gatedStore{Store: st, gate: map[string]chan struct{}{"slim": make(chan struct{})}}
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	var rec errRecorder
	if errs := eng.LoadPersistedAsync(context.Background(), gated, []string{"userknn", "ease"}, rec.report); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := eng.Lookup("userknn"); got == nil || got.Info.Version != user.Version || eng.Loading("userknn") {
		t.Fatalf("userknn after the first load: %v (loading %v), want %s served", got, eng.Loading("userknn"), user.Version)
	}
	if !eng.Loading("slim") || eng.Loading("ease") || eng.LoadingCount() != 1 {
		t.Fatalf("loading: slim %v, ease %v, %d in all; want slim alone", eng.Loading("slim"), eng.Loading("ease"), eng.LoadingCount())
	}
	close(gated.gate["slim"])
	if err := eng.WaitLoaded(context.Background()); err != nil || eng.Lookup("slim") == nil {
		t.Fatalf("after the load: %v, slim %v", err, eng.Lookup("slim"))
	}
}

// Sync serves what the store holds, but makes active only the store's
// active model: a model another replica (or the leader's own job, which
// the leader syncs too) has stored but not activated is asked by name,
// and requests naming no model keep the popularity fallback until the
// store names one. When it does, Sync activates it.
func TestEngine_syncActivatesOnlyTheStoresActive(t *testing.T) {
	st := twoTastes(t)
	ctx := context.Background()
	pop := persist(t, st, "popular", fitModel(t, st, "popular", recsys.Params{}))
	items := persist(t, st, "itemknn", fitItemKNN(t, st, 2))
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	if err := eng.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	if got := eng.Lookup("popular"); got == nil || got.Info.Version != pop.Version {
		t.Fatalf("popular after sync: %v, want version %s", got, pop.Version)
	}
	if a := eng.Active(); a != nil {
		t.Fatalf("active after a sync of a store with no active model: %s %s, want none", a.Info.Name, a.Info.Version)
	}
	if err := st.SetActiveModel(ctx, "itemknn"); err != nil {
		t.Fatal(err)
	}
	if err := eng.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	if a := eng.Active(); a == nil || a.Info.Name != "itemknn" || a.Info.Version != items.Version {
		t.Fatalf("active after the store named itemknn: %v, want itemknn %s", a, items.Version)
	}
}

// TestEngine_contentIndexBeforeReady: a start is not ready, and content
// requests are answered model_not_ready with Retry-After (no scan), until
// the content model is loaded with its index built, the HNSW graph
// included above the threshold; once ready, the graph answers at once.
func TestEngine_contentIndexBeforeReady(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 4))
	items := putABCItems(t, st, 400, "i%03d", func() (a, b, c float64) { return rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64() })
	add(t, st, "u", "view", "i000", "i001")
	persist(t, st, "popular", fitModel(t, st, "popular", recsys.Params{}))
	if err := st.SetActiveModel(ctx, "popular"); err != nil {
		t.Fatal(err)
	}
	cinfo := persist(t, st, content.Name, content.NewContent([]string{"a", "b", "c"}, retrieval.Euclidean(make([]float64, 3), []float64{1, 1, 1})))
	gated := &gatedStore{Store: st, gate: map[string]chan struct{}{content.Name: make(chan struct{})}}
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour, ContentApproxAbove: 300})
	var rec errRecorder
	if errs := eng.LoadPersistedAsync(ctx, gated, nil, rec.report); len(errs) != 0 {
		t.Fatalf("first load: %v", errs)
	}
	var ae *api.Error
	if err := eng.Ready(ctx); !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady || !strings.Contains(ae.Message, content.Name) {
		t.Fatalf("ready while the content model loads: %v, want model_not_ready naming it", err)
	}
	_, err := eng.Similar(ctx, api.SimilarRequest{ItemID: items[0].ID, N: 5, By: "content"})
	if !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady || ae.RetryAfter == 0 {
		t.Fatalf("by=content while loading: %v, want model_not_ready with Retry-After", err)
	}
	if _, err := eng.SearchSimilar(ctx, map[string]float64{"a": 1}, 5); !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady {
		t.Fatalf("search by example while loading: %v, want model_not_ready", err)
	}
	close(gated.gate[content.Name])
	if err := waitFor(func() bool { return eng.Ready(ctx) == nil }); err != nil {
		t.Fatalf("never ready: %v (%v)", err, eng.Ready(ctx))
	}
	m := eng.Lookup(content.Name)
	if m == nil || m.Info.Version != cinfo.Version {
		t.Fatalf("content model %v, want version %s", m, cinfo.Version)
	}
	s := m.search.Load()
	if s == nil || s.built.Load() == nil || !s.built.Load().searcher.Approximate() {
		t.Fatal("ready without the content model's HNSW index")
	}
	got, err := eng.Similar(ctx, api.SimilarRequest{ItemID: items[0].ID, N: 5, By: "content"})
	if err != nil || len(got.Items) != 5 {
		t.Fatalf("by=content once ready: %+v, %v", got, err)
	}
}

// TestEngine_contentNewItemFound: an item added after the index was built
// is found by content search, as a neighbour and as the item asked
// about, with the graph's catalogue above the threshold.
func TestEngine_contentNewItemFound(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(6, 6))
	putABCItems(t, st, 400, "i%03d", func() (a, b, c float64) { return rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64() })
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour, ContentApproxAbove: 300})
	eng.Install(&Served{Info: api.ModelInfo{Name: content.Name, Version: "v1"},
		Model: content.NewContent([]string{"a", "b", "c"}, retrieval.Euclidean(make([]float64, 3), []float64{1, 1, 1}))}, false)
	if s := eng.Lookup(content.Name).search.Load(); s == nil || !s.built.Load().searcher.Approximate() {
		t.Fatal("installed without its HNSW index")
	}
	// Far from every generated item (normal draws), next to each other.
	if err := st.PutItems(ctx, []api.Item{{ID: "new1", Features: map[string]float64{"a": 20, "b": 20, "c": 20}},
		{ID: "new2", Features: map[string]float64{"a": 20.5, "b": 20, "c": 20}}}); err != nil {
		t.Fatal(err)
	}
	got, err := eng.Similar(ctx, api.SimilarRequest{ItemID: "new1", N: 1, By: "content"})
	if err != nil || len(got.Items) != 1 || got.Items[0].ItemID != "new2" {
		t.Fatalf("similar to new1: %+v, %v; want new2", got, err)
	}
	// Squared distance 0.25: similarity 1/(1+0.25).
	if got.Items[0].Score != 0.8 {
		t.Errorf("score %v, want 0.8", got.Items[0].Score)
	}
	res, err := eng.SearchSimilar(ctx, map[string]float64{"a": 20, "b": 20, "c": 20}, 2)
	if err != nil || len(res.Items) != 2 || res.Items[0].ItemID != "new1" || res.Items[1].ItemID != "new2" {
		t.Fatalf("search by example: %+v, %v; want new1, new2", res, err)
	}
}
