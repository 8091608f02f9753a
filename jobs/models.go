package jobs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"recsys/api"
	"recsys/recsys"
	"recsys/retrieval"
)

// Served is a trained model ready to answer, with its record.
type Served struct {
	Info  api.ModelInfo
	Model recsys.Model
}

// Recommender reports whether name is a recommender of the registry: a
// model that ranks items for a user, which evaluations, activation and
// ?model= accept. The content metric is not one.
func Recommender(name string) bool { return slices.Contains(recsys.Names(), name) }

// distinct is names without repeats, in their first order.
func distinct(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// modelSet is an immutable view of the served models; the engine swaps a
// whole new set in with one atomic store, so a reader sees either the old
// or the new version, never half of one.
type modelSet struct {
	active string
	byName map[string]*Served
}

// Install serves m under its name, replacing the previous version; when
// activate is set, m's name becomes the active model.
func (e *Engine) Install(m *Served, activate bool) {
	e.swapMu.Lock()
	defer e.swapMu.Unlock()
	old := e.models.Load()
	next := &modelSet{byName: make(map[string]*Served, len(old.byName)+1), active: old.active}
	for k, v := range old.byName {
		next.byName[k] = v
	}
	next.byName[m.Info.Name] = m
	if activate || next.active == "" {
		next.active = m.Info.Name
	}
	e.models.Store(next)
}

// Activate makes a served model the default.
func (e *Engine) Activate(name string) error {
	e.swapMu.Lock()
	defer e.swapMu.Unlock()
	old := e.models.Load()
	if _, ok := old.byName[name]; !ok {
		return api.Errorf(api.CodeNotFound, "model %q is not trained", name)
	}
	e.models.Store(&modelSet{active: name, byName: old.byName})
	return nil
}

// Active returns the active model, nil when none is loaded.
func (e *Engine) Active() *Served {
	set := e.models.Load()
	return set.byName[set.active]
}

// Lookup returns a served model by name, nil when it is not loaded.
func (e *Engine) Lookup(name string) *Served {
	return e.models.Load().byName[name]
}

// ModelStore is what loading persisted models needs.
type ModelStore interface {
	Models(ctx context.Context) ([]api.ModelInfo, error)
	ModelBlob(ctx context.Context, name, version string) ([]byte, error)
	ActiveModel(ctx context.Context) (string, error)
}

// LoadPersisted serves the newest persisted version of every model and
// activates the stored active one. A model that fails to decode is skipped
// and reported in the returned error list; the service keeps going with
// the rest (or the popularity fallback).
func (e *Engine) LoadPersisted(ctx context.Context, st ModelStore) []error {
	infos, err := st.Models(ctx)
	if err != nil {
		return []error{err}
	}
	active, err := st.ActiveModel(ctx)
	if err != nil {
		return []error{err}
	}
	var errs []error
	loaded := map[string]bool{}
	for _, info := range infos { // newest first within a name
		if loaded[info.Name] {
			continue
		}
		blob, err := st.ModelBlob(ctx, info.Name, info.Version)
		if err == nil && info.Name == ContentModelName {
			var names []string
			var m *retrieval.Metric
			if names, m, err = decodeContent(blob); err == nil {
				e.InstallContent(info, names, m)
				loaded[info.Name] = true
				continue
			}
		} else if err == nil {
			var m recsys.Model
			if m, err = recsys.Load(blob); err == nil {
				e.Install(&Served{Info: info, Model: m}, info.Name == active)
				loaded[info.Name] = true
				continue
			}
		}
		errs = append(errs, fmt.Errorf("model %s %s: %w", info.Name, info.Version, err))
	}
	if active != "" && !loaded[active] {
		errs = append(errs, fmt.Errorf("the active model %q could not be loaded; answering from the popularity fallback", active))
	}
	return errs
}

// scoreBuffers recycles per-request score vectors.
var scoreBuffers = sync.Pool{New: func() any { return new([]float64) }}

// recommendFrom ranks the catalogue for a user with model m.
func (e *Engine) recommendFrom(c *catalogueCache, m *Served, prof api.Profile, req api.RecommendRequest) []api.ScoredItem {
	bufp := scoreBuffers.Get().(*[]float64)
	defer scoreBuffers.Put(bufp)
	n := len(c.cat.ItemIDs)
	if cap(*bufp) < n {
		*bufp = make([]float64, n)
	}
	scores := (*bufp)[:n]
	m.Model.Score(prof.Positive, scores)
	skip := newFilter(c.cat, prof, req)
	for i := range scores {
		if skip(uint32(i)) {
			scores[i] = math.Inf(-1)
		}
	}
	top := recsys.TopN(scores, c.pop32, nil, req.N)
	out := make([]api.ScoredItem, 0, len(top))
	for _, i := range top {
		out = append(out, api.ScoredItem{ItemID: c.cat.ItemIDs[i], Score: scores[i]})
	}
	return out
}

// reasonsPerItem is how many reasons explain=true attaches to an item.
const reasonsPerItem = 3

// explain attaches to each item the largest terms of its score: consumed
// items (item side) and neighbour users (user side).
func (e *Engine) explain(ctx context.Context, c *catalogueCache, m *Served, prof api.Profile, items []api.ScoredItem) error {
	ex, ok := m.Model.(recsys.Explainer)
	if !ok {
		return nil
	}
	idx := make([]uint32, len(items))
	for k, it := range items {
		idx[k] = c.cat.Index[it.ItemID]
	}
	terms := ex.Explain(prof.Positive, idx, reasonsPerItem)
	var users []uint32
	for _, ts := range terms {
		for _, t := range ts {
			if t.User {
				users = append(users, t.Index)
			}
		}
	}
	userIDs, err := e.src.UserIDs(ctx, users)
	if err != nil {
		return err
	}
	for k, ts := range terms {
		for _, t := range ts {
			r := api.Reason{Kind: "item", Weight: t.Weight}
			if t.User {
				r.Kind, r.ID, userIDs = "user", userIDs[0], userIDs[1:]
			} else if int(t.Index) < len(c.cat.ItemIDs) {
				r.ID = c.cat.ItemIDs[t.Index]
			}
			if r.ID != "" {
				items[k].Reasons = append(items[k].Reasons, r)
			}
		}
	}
	return nil
}
