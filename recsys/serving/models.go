package serving

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"recsys/api"
	"recsys/recsys"
)

// Artefact is the value of a served model: a recommender (recsys.Model),
// or a model of another kind registered with RegisterKind (the content
// metric, Content). Every kind is persisted as the bytes of its
// MarshalBinary and read back by Decode.
type Artefact interface {
	MarshalBinary() ([]byte, error)
}

// Served is a trained model ready to answer, with its record.
type Served struct {
	Info  api.ModelInfo
	Model Artefact
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
func (e *Engine) Install(m *Served, activate bool) {
	e.swapMu.Lock()
	defer e.swapMu.Unlock()
	old := e.models.Load()
	next := &modelSet{byName: make(map[string]*Served, len(old.byName)+1), active: old.active}
	for k, v := range old.byName {
		next.byName[k] = v
	}
	next.byName[m.Info.Name] = m
	if m.recommends() && (activate || next.active == "") {
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
		return api.Errorf(api.CodeNotFound, "model %q is not trained", name)
	} else if !m.recommends() {
		return api.Errorf(api.CodeNotFound, "%q is not a recommender and cannot answer recommendations", name)
	}
	e.models.Store(&modelSet{active: name, byName: old.byName})
	return nil
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

// ModelStore is what loading persisted models needs.
type ModelStore interface {
	Models(ctx context.Context) ([]api.ModelInfo, error)
	ModelBlob(ctx context.Context, name, version string) ([]byte, error)
	ActiveModel(ctx context.Context) (string, error)
}

func newestOf(newest []api.ModelInfo, info api.ModelInfo) bool {
	for _, n := range newest {
		if n.Name == info.Name && n.Version == info.Version {
			return true
		}
	}
	return false
}

// LoadPersisted serves the newest persisted version of every model, of
// every kind (Decode), and activates the stored active one. A model that
// fails to decode is skipped and reported in the returned error list; the
// service keeps going with the rest (or the popularity fallback).
func (e *Engine) LoadPersisted(ctx context.Context, st ModelStore) []error {
	infos, err := st.Models(ctx)
	if err != nil {
		return []error{err}
	}
	active, err := st.ActiveModel(ctx)
	if err != nil {
		return []error{err}
	}
	// The newest version of each name, decoded concurrently: at 20M
	// events each neighbourhood model takes about a second to decode and
	// index, most of a server's start.
	var newest []api.ModelInfo
	seen := map[string]bool{}
	for _, info := range infos { // newest first within a name
		if !seen[info.Name] {
			seen[info.Name] = true
			newest = append(newest, info)
		}
	}
	decoded := make([]Artefact, len(newest))
	failed := make([]error, len(newest))
	var wg sync.WaitGroup
	for k, info := range newest {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blob, err := st.ModelBlob(ctx, info.Name, info.Version)
			if err == nil {
				decoded[k], err = Decode(info.Name, blob)
			}
			failed[k] = err
		}()
	}
	wg.Wait()
	var errs []error
	loaded := map[string]bool{}
	for k, info := range newest {
		if failed[k] != nil {
			errs = append(errs, fmt.Errorf("model %s %s: %w", info.Name, info.Version, failed[k]))
			continue
		}
		e.Install(&Served{Info: info, Model: decoded[k]}, info.Name == active)
		loaded[info.Name] = true
	}
	// A name whose newest version failed falls back to its older ones.
	for _, info := range infos {
		if loaded[info.Name] || newestOf(newest, info) {
			continue
		}
		blob, err := st.ModelBlob(ctx, info.Name, info.Version)
		if err == nil {
			var m Artefact
			if m, err = Decode(info.Name, blob); err == nil {
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
		if cur := e.Lookup(info.Name); cur != nil && cur.Info.Version >= info.Version {
			continue
		}
		blob, err := st.ModelBlob(ctx, info.Name, info.Version)
		var m Artefact
		if err == nil {
			m, err = Decode(info.Name, blob)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("model %s %s: %w", info.Name, info.Version, err))
			continue
		}
		e.Install(&Served{Info: info, Model: m}, info.Name == active)
	}
	if cur := e.Active(); active != "" && (cur == nil || cur.Info.Name != active) && e.Lookup(active) != nil {
		errs = append(errs, e.Activate(active))
	}
	return errors.Join(errs...)
}
