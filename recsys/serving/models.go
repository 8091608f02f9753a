package serving

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/content"
)

// Served is a trained model ready to answer, with its record. Model is a
// recommender (recsys.Model) or another registered kind (the content
// metric, content.Content); every kind is persisted as the bytes of its
// MarshalBinary and read back by recsys.Decode.
type Served struct {
	Info  api.ModelInfo
	Model recsys.Artefact
	// search is a content model's search, its index built before the
	// model is served (prepareContent).
	search atomic.Pointer[contentSearch]
}

// recommends reports whether m ranks items for users: only such a model
// answers ?model= and may be the active one.
func (m *Served) recommends() bool {
	_, ok := m.Model.(recsys.Model)
	return ok
}

// modelSet is an immutable view of the served models; the engine swaps a
// whole new set in with one atomic store, so a reader sees either the old
// or the new version, never half of one.
type modelSet struct {
	active string
	byName map[string]*Served
	// loading names the persisted models a start is still decoding after
	// the ones it served first (LoadPersistedAsync).
	loading map[string]bool
}

// with returns a copy of s with m served (nil: none added) and name no
// longer loading.
func (s *modelSet) with(name string, m *Served) *modelSet {
	next := &modelSet{byName: make(map[string]*Served, len(s.byName)+1), active: s.active}
	for k, v := range s.byName {
		next.byName[k] = v
	}
	if m != nil {
		next.byName[name] = m
	}
	if len(s.loading) > 0 {
		next.loading = make(map[string]bool, len(s.loading))
		for k := range s.loading {
			if k != name {
				next.loading[k] = true
			}
		}
	}
	return next
}

// recommender returns the served recommender called name, nil when none
// is.
func (s *modelSet) recommender(name string) *Served {
	if m := s.byName[name]; m != nil && m.recommends() {
		return m
	}
	return nil
}

// Install serves m under its name, replacing the previous version, whatever
// its kind: every trained model reaches the requests this way. When
// activate is set, or no model is active yet, a recommender becomes the
// active model; a model of another kind never does, since the active model
// answers recommendations.
func (e *Engine) Install(m *Served, activate bool) { e.install(m, activate, true) }

// install is Install; orFirst makes a recommender active when none is.
// Sync passes false: what a replica serves by default is the store's
// active model, and a model another replica stored but has not (yet)
// activated must not become the default here, nor decide the leader's
// choice of one (the leader syncs its own writes too).
func (e *Engine) install(m *Served, activate, orFirst bool) {
	e.prepare(m)
	e.swapMu.Lock()
	defer e.swapMu.Unlock()
	// A version installed while the start still loads the persisted one
	// is newer: the load leaves it (installLoaded).
	next := e.models.Load().with(m.Info.Name, m)
	if m.recommends() && (activate || orFirst && next.active == "") {
		next.active = m.Info.Name
	}
	e.models.Store(next)
}

// Activate makes a served recommender the default.
func (e *Engine) Activate(name string) error {
	e.swapMu.Lock()
	defer e.swapMu.Unlock()
	old := e.models.Load()
	if m, ok := old.byName[name]; !ok {
		if old.loading[name] {
			return api.ModelLoading(name)
		}
		return api.Errorf(api.CodeNotFound, "model %q is not trained", name)
	} else if !m.recommends() {
		return api.Errorf(api.CodeNotFound, "%q is not a recommender and cannot answer recommendations", name)
	}
	e.models.Store(&modelSet{active: name, byName: old.byName, loading: old.loading})
	return nil
}

// prepare builds what m needs before it is served: a content model's
// index (prepareContent). While another content model serves, the build
// runs on one thread of lower priority, so that the requests keep the
// cores; the model serving meanwhile answers until m replaces it.
func (e *Engine) prepare(m *Served) {
	if m.Info.Name != content.Name || m.search.Load() != nil {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if e.contentSearch() != nil {
		defer backgroundThread()()
		workers = 1
	}
	e.prepareContent(context.Background(), m, workers)
}

// Loading reports whether name is a persisted model the start is still
// loading (LoadPersistedAsync).
func (e *Engine) Loading(name string) bool { return e.models.Load().loading[name] }

// LoadingCount is the number of persisted models the start is still
// loading.
func (e *Engine) LoadingCount() int { return len(e.models.Load().loading) }

// LoadingNames lists, sorted, the persisted models the start is still
// loading.
func (e *Engine) LoadingNames() []string {
	return slices.Sorted(maps.Keys(e.models.Load().loading))
}

// installLoaded serves a persisted model the start loaded after the first
// ones (m nil: none of its versions loaded), unless a newer version was
// installed meanwhile; a recommender becomes the active model when none
// is, as with Install.
func (e *Engine) installLoaded(name string, m *Served) {
	e.swapMu.Lock()
	defer e.swapMu.Unlock()
	old := e.models.Load()
	if !old.loading[name] {
		return
	}
	next := old.with(name, m)
	if m != nil && m.recommends() && next.active == "" {
		next.active = name // as Install: the stored active model could not be loaded
	}
	e.models.Store(next)
}

// Active returns the active model, nil when none is loaded.
func (e *Engine) Active() *Served {
	set := e.models.Load()
	return set.byName[set.active]
}

// Lookup returns a served model of any kind by name, nil when it is not
// loaded.
func (e *Engine) Lookup(name string) *Served {
	return e.models.Load().byName[name]
}

// Serves reports whether a request naming model name is answered by that
// model: one the engine holds, or the popularity baseline, which answers
// from the catalogue's counts even before it is fitted.
func (e *Engine) Serves(name string) bool {
	return name == recsys.PopularModel || e.Lookup(name) != nil
}

// ModelStore is what loading persisted models needs.
type ModelStore interface {
	Models(ctx context.Context) ([]api.ModelInfo, error)
	ModelBlob(ctx context.Context, name, version string) ([]byte, error)
	ActiveModel(ctx context.Context) (string, error)
}

// persisted is what a start loads: the stored versions of every model by
// name, newest first, the names in the store's order, and the active one.
type persisted struct {
	names    []string
	versions map[string][]api.ModelInfo
	active   string
}

func readPersisted(ctx context.Context, st ModelStore) (*persisted, error) {
	infos, err := st.Models(ctx)
	if err != nil {
		return nil, err
	}
	p := &persisted{versions: map[string][]api.ModelInfo{}}
	if p.active, err = st.ActiveModel(ctx); err != nil {
		return nil, err
	}
	for _, info := range infos { // newest first within a name
		if p.versions[info.Name] == nil {
			p.names = append(p.names, info.Name)
		}
		p.versions[info.Name] = append(p.versions[info.Name], info)
	}
	return p, nil
}

// loadVersions decodes the newest of a model's versions that decodes: a
// version that fails is reported and the next older one tried. It returns
// nil when none loads.
func loadVersions(ctx context.Context, st ModelStore, versions []api.ModelInfo) (*Served, []error) {
	var errs []error
	for _, info := range versions {
		blob, err := st.ModelBlob(ctx, info.Name, info.Version)
		var m recsys.Artefact
		if err == nil {
			m, err = recsys.Decode(info.Name, blob)
		}
		if err == nil {
			return &Served{Info: info, Model: m}, errs
		}
		errs = append(errs, fmt.Errorf("model %s %s: %w", info.Name, info.Version, err))
	}
	return nil, errs
}

// loadAll loads the named models concurrently (at 20M events a
// neighbourhood model takes about a second to decode and index) and
// installs them in the order given, activating p's active one.
func (e *Engine) loadAll(ctx context.Context, st ModelStore, p *persisted, names []string) []error {
	served := make([]*Served, len(names))
	failed := make([][]error, len(names))
	var wg sync.WaitGroup
	for k, name := range names {
		wg.Go(func() { served[k], failed[k] = loadVersions(ctx, st, p.versions[name]) })
	}
	wg.Wait()
	var errs []error
	for k, name := range names {
		errs = append(errs, failed[k]...)
		if served[k] != nil {
			e.Install(served[k], name == p.active)
		}
	}
	return errs
}

// activeMissing reports an active model that none of the loads served.
func (e *Engine) activeMissing(p *persisted) []error {
	if p.active == "" || e.Lookup(p.active) != nil {
		return nil
	}
	if a := e.Active(); a != nil { // Install made the first recommender loaded active
		return []error{fmt.Errorf("the active model %q could not be loaded; answering from %q instead", p.active, a.Info.Name)}
	}
	return []error{fmt.Errorf("the active model %q could not be loaded; answering from the popularity fallback", p.active)}
}

// LoadPersisted serves the newest persisted version of every model, of
// every kind (Decode), and activates the stored active one. A version that
// fails to decode is skipped and reported in the returned error list, and
// the model's older version served instead if it has one; the service
// keeps going with the rest (or the popularity fallback).
func (e *Engine) LoadPersisted(ctx context.Context, st ModelStore) []error {
	p, err := readPersisted(ctx, st)
	if err != nil {
		return []error{err}
	}
	return append(e.loadAll(ctx, st, p, p.names), e.activeMissing(p)...)
}

// LoadPersistedAsync is LoadPersisted for a server's start: it loads, and
// returns after, only the models that requests naming no model answer
// from (the active model, the model similar items fall back to when the
// active one has no item lists, and the models also names: a running
// experiment's arms). It loads the others after it, the content model
// first (its index is built as it loads, which at a million items takes
// longer than all the others; cold slots and content requests wait for
// it, the rest does not),
// backgroundLoaders at a time, each on a thread of lower priority so that
// the requests keep the cores, each served as soon as it is decoded;
// until then a request naming one is answered model_not_ready with
// Retry-After (Loading), and Ready is not. Errors of the later loads go to
// report; WaitLoaded returns when they are done, or ctx is cancelled.
func (e *Engine) LoadPersistedAsync(ctx context.Context, st ModelStore, also []string, report func(error)) []error {
	e.loadDone = make(chan struct{})
	p, err := readPersisted(ctx, st)
	if err != nil || p.active == "" {
		// Without a stored active model the first recommender loaded
		// becomes the active one (Install): all of them load first.
		close(e.loadDone)
		if err != nil {
			return []error{err}
		}
		return e.loadAll(ctx, st, p, p.names)
	}
	var first []string
	for _, name := range append([]string{p.active}, also...) {
		if p.versions[name] != nil && !slices.Contains(first, name) {
			first = append(first, name)
		}
	}
	errs := e.loadAll(ctx, st, p, first)
	if m, _ := e.neighbourModel(); m == nil {
		for _, name := range recsys.SimilarFallbacks() {
			if p.versions[name] == nil || slices.Contains(first, name) {
				continue
			}
			first = append(first, name)
			errs = append(errs, e.loadAll(ctx, st, p, []string{name})...)
			if m, _ := e.neighbourModel(); m != nil {
				break
			}
		}
	}
	var rest []string
	if p.versions[content.Name] != nil && !slices.Contains(first, content.Name) {
		rest = append(rest, content.Name)
	}
	for _, name := range p.names {
		if !slices.Contains(first, name) && !slices.Contains(rest, name) {
			rest = append(rest, name)
		}
	}
	if missing := e.activeMissing(p); missing != nil && e.Active() == nil && len(rest) > 0 {
		errs = append(errs, fmt.Errorf("%w until a model loaded after the start answers", missing[0]))
	} else {
		errs = append(errs, missing...)
	}
	e.swapMu.Lock()
	next := e.models.Load().with("", nil)
	next.loading = map[string]bool{}
	for _, name := range rest {
		if next.byName[name] == nil {
			next.loading[name] = true
		}
	}
	e.models.Store(next)
	e.swapMu.Unlock()
	var turn atomic.Int64 // the index in rest of the next model to load
	var wg sync.WaitGroup
	for range min(backgroundLoaders, len(rest)) {
		wg.Go(func() {
			defer backgroundThread()()
			for k := int(turn.Add(1)) - 1; k < len(rest); k = int(turn.Add(1)) - 1 {
				name := rest[k]
				if ctx.Err() != nil || !e.Loading(name) { // or a training or Sync served it meanwhile
					e.installLoaded(name, nil)
					continue
				}
				m, errs := loadVersions(ctx, st, p.versions[name])
				if m != nil && m.Info.Name == content.Name {
					// Before ready: the build may take both cores.
					e.prepareContent(ctx, m, runtime.GOMAXPROCS(0))
				}
				if ctx.Err() == nil { // a cancelled load is not a damaged model
					for _, err := range errs {
						report(err)
					}
				}
				e.installLoaded(name, m)
			}
		})
	}
	go func() {
		wg.Wait()
		close(e.loadDone)
	}()
	return errs
}

// backgroundLoaders is the number of models a start loads at a time after
// the first ones, each on its own background thread.
const backgroundLoaders = 2

// WaitLoaded returns once the models LoadPersistedAsync left to its
// loaders are loaded (at once without one), or with ctx's error.
func (e *Engine) WaitLoaded(ctx context.Context) error {
	if e.loadDone == nil {
		return nil
	}
	select {
	case <-e.loadDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sync brings the served models up to the store's: a newer version of a
// model is decoded and installed, and the stored active model becomes the
// active one. Replicas sharing a store call it when another replica stored
// or activated a model (docs/design.md#replicas); what is already served is
// not read again.
func (e *Engine) Sync(ctx context.Context, st ModelStore) error {
	infos, err := st.Models(ctx)
	if err != nil {
		return err
	}
	active, err := st.ActiveModel(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var errs []error
	for _, info := range infos { // newest first within a name
		if seen[info.Name] {
			continue
		}
		seen[info.Name] = true
		cur := e.Lookup(info.Name)
		if cur == nil && e.Loading(info.Name) {
			continue // the start's load serves it; a newer version is synced after
		}
		if cur != nil && cur.Info.Version >= info.Version {
			continue
		}
		blob, err := st.ModelBlob(ctx, info.Name, info.Version)
		var m recsys.Artefact
		if err == nil {
			m, err = recsys.Decode(info.Name, blob)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("model %s %s: %w", info.Name, info.Version, err))
			continue
		}
		e.install(&Served{Info: info, Model: m}, info.Name == active, false)
	}
	if cur := e.Active(); active != "" && (cur == nil || cur.Info.Name != active) && e.Lookup(active) != nil {
		errs = append(errs, e.Activate(active))
	}
	return errors.Join(errs...)
}
