package eval

import (
	"context"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// sharedSearches are one fold's searches of the models that other models
// start from, each made once: a FEBR variant starts from the tuned
// setting of its aggsum baselines and, over the SLIM affinity, of slim
// (the same grid and extension as the model alone), and febr-blend from
// its bases'. The first row that needs a model's search makes it, and
// the model's own row and the others take it.
type sharedSearches struct {
	split *Split
	cache *recsys.NeighbourCache
	keep  map[string]bool
	done  map[string]*Tuned
	// hold, under the users protocol, adds training users' held-out
	// items to every row's selection evidence (trainHoldout).
	hold *trainHoldout
}

// newSharedSearches keeps the searches that the models of a run start
// from (startsFrom) on the fold's split and cache.
func newSharedSearches(models []string, s *Split, cache *recsys.NeighbourCache) *sharedSearches {
	sh := &sharedSearches{split: s, cache: cache, keep: map[string]bool{}, done: map[string]*Tuned{}}
	for _, name := range models {
		for _, b := range startsFrom(name) {
			sh.keep[b] = true
		}
	}
	return sh
}

// startsFrom lists the models whose tuned settings the search of name
// starts from: febr-blend's bases; a FEBR variant's aggsum baselines and,
// over the SLIM affinity, slim.
func startsFrom(name string) []string {
	if name == febr.BlendName {
		return febr.BlendBases()
	}
	v, ok := febr.VariantOf(name)
	if !ok {
		return nil
	}
	out := slices.Clone(v.Baselines)
	if v.Affinity == "slim" {
		out = append(out, "slim")
	}
	return out
}

// tune is Tune of name on the fold's split with t, made once per fold
// when name is kept. The choice's model is kept with it: the models that
// start from it take it as fitted.
func (sh *sharedSearches) tune(ctx context.Context, name string, t Tuning) (*Tuned, error) {
	t.shared = sh
	if !sh.keep[name] {
		return Tune(ctx, name, sh.split, sh.cache, t)
	}
	if d := sh.done[name]; d != nil {
		return d, nil
	}
	d, err := Tune(ctx, name, sh.split, sh.cache, t)
	if err != nil {
		return nil, err
	}
	sh.done[name] = d
	return d, nil
}

// baseFor is the shared search of base name when a blend's search on x
// under t can take it (takes), made now if it is not yet.
func (sh *sharedSearches) baseFor(ctx context.Context, name string, x *recsys.Matrix, t Tuning) (*Tuned, bool, error) {
	if !sh.takes(name, x, t) {
		return nil, false, nil
	}
	d, err := sh.tune(ctx, name, t)
	return d, err == nil, err
}

// made reports whether the search of base name for a blend on x under t
// is made already (baseFor would take it without searching).
func (sh *sharedSearches) made(name string, x *recsys.Matrix, t Tuning) bool {
	return sh.takes(name, x, t) && sh.done[name] != nil
}

// takes reports whether a blend's search on x under t takes the shared
// search of base name: x is the fold's training matrix, so the blend's
// validation users are the base's own (Nested's tuning half, sampled
// alike), and name is kept. A blend searched on other rows (the users
// protocol's live histories) searches its bases itself.
func (sh *sharedSearches) takes(name string, x *recsys.Matrix, t Tuning) bool {
	return sh.on(x, t) && sh.keep[name]
}

// on reports whether a search on x under t is one of the fold's, whose
// bases' searches can be shared: x is the fold's training matrix and the
// search is nested as the fold's are.
func (sh *sharedSearches) on(x *recsys.Matrix, t Tuning) bool {
	return sh != nil && t.Nested && x == sh.split.Train
}
