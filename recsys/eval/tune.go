package eval

import (
	"context"
	"fmt"
	"math/rand/v2"

	"recsys/recsys"
	"recsys/recsys/metrics"
)

// Tuning configures Tune.
type Tuning struct {
	// Grid is the search space; every model kind takes its candidates
	// from it (recsys.Kind.Candidates). The service passes a shorter grid
	// than the evaluation (DefaultGrid).
	Grid recsys.Grid
	// ValidationUsers caps the users whose validation items score each
	// candidate: above it, a fixed-seed uniform sample of that many users
	// with validation items validates every candidate (and FEBR's early
	// stopping). 0 means DefaultValidationUsers, negative means all.
	// Validation ranks every item for every user, so at 10⁵ users × 10⁴
	// items it costs more than the fits.
	ValidationUsers int
	// SampleSeed seeds the validation-user sample (0: 1).
	SampleSeed uint64
	// FEBR is the template of every FEBR fit (seed, early stopping,
	// learning rate, memory budget); the search sets λ and the validation
	// items.
	FEBR recsys.FEBROptions
	// OnFit, when not nil, is called after every fit.
	OnFit func()
}

// DefaultValidationUsers is the validation-user sample of Tuning: with the
// per-user ADG's standard deviation of 0.1–0.15 on ml-100k and Last.fm, a
// mean over 5,000 users has a standard error of about 0.002, and the
// difference between two candidates, measured on the same users, far less
// (README "Sampled validation").
const DefaultValidationUsers = 5000

// Tuned is the outcome of Tune: the choice, with Params refitting the
// chosen model on the split's training matrix and Refit on all the data.
type Tuned struct {
	recsys.Choice
	// Validation holds every measure of the chosen model over the
	// validation users (the sample of Tuning.ValidationUsers).
	Validation metrics.Values
	// Candidates are the configurations searched, for reports (a FEBR
	// search with Grid.KByBaseline fits fewer).
	Candidates []recsys.Params
}

// Tune is the hyper-parameter search of dissertation §4.7.3 for one model
// on a split, shared by the service's training and the offline
// evaluation. The model's kind lists its candidates from the grid with k
// capped by the data (recsys.Kind.Candidates, recsys.Caps); each is fitted
// on s.Train and its validation items ranked, and the one with the highest
// validation ADG (Def. 4.2) is chosen, the first on a tie, so the smaller
// k. A kind with its own search (FEBR, recsys.Kind.Search) runs that
// instead. cache, built on s.Train with k_max at least the largest k of
// the grid, is required: it shares the neighbour lists among the fits and
// gives the longest item list.
func Tune(ctx context.Context, name string, s *Split, cache *recsys.NeighbourCache, t Tuning) (*Tuned, error) {
	kind, err := recsys.KindOf(name)
	if err != nil {
		return nil, err
	}
	var caps recsys.Caps
	if kind.Candidates != nil || kind.Search != nil {
		// Only a grid needs the caps: a model without one (popular) does
		// not wait for the item neighbour lists.
		if caps, err = dataCaps(ctx, s.Train, cache); err != nil {
			return nil, err
		}
	}
	cands := candidates(kind, t.Grid, caps)
	val := SampleUsers(s.Validation, t.validationUsers(), t.SampleSeed)
	if kind.Search != nil {
		febr := t.FEBR
		c, err := kind.Search(ctx, s.Train, val, t.Grid, caps, recsys.Params{Cache: cache, FEBR: &febr}, t.OnFit)
		if err != nil {
			return nil, fmt.Errorf("eval: search %s: %w", name, err)
		}
		val, err := Evaluate(ctx, c.Model, s.Train, val)
		if err != nil {
			return nil, err
		}
		return &Tuned{Choice: c, Validation: val, Candidates: cands}, nil
	}
	var (
		best      Tuned
		prev      recsys.Model
		prevP, bp recsys.Params
		bestADG   = -1.0
		fitted    []func() recsys.Model
	)
	if kind.FitGrid != nil {
		// The whole grid at once (slim), with the warm starts below.
		ps := make([]recsys.Params, len(cands))
		for c, p := range cands {
			ps[c] = p
			ps[c].Cache = cache
		}
		if fitted, err = kind.FitGrid(ctx, s.Train, ps); err != nil {
			return nil, fmt.Errorf("eval: fit %s: %w", name, err)
		}
	}
	for c, p := range cands {
		var m recsys.Model
		p.Cache = cache
		if fitted != nil {
			m, fitted[c] = fitted[c](), nil
		} else {
			m = kind.New()
			if prev != nil && recsys.WarmStart(prevP, p) {
				// Consecutive candidates differ in ℓ1 only: warm start
				// along the regularisation path (slim; the others ignore
				// Init).
				p.Init = prev
			}
			if err := m.Fit(ctx, s.Train, p); err != nil {
				return nil, fmt.Errorf("eval: fit %s: %w", name, err)
			}
		}
		v, err := Evaluate(ctx, m, s.Train, val)
		if err != nil {
			return nil, err
		}
		if v[metrics.MADG] > bestADG {
			bp, bestADG = p, v[metrics.MADG]
			best.Model, best.Validation = m, v
		}
		prev, prevP = m, p
		if t.OnFit != nil {
			t.OnFit()
		}
	}
	bp.Cache, bp.Init = nil, nil
	best.Params, best.Refit, best.ValidationADG = bp, bp, bestADG
	best.Candidates = cands
	return &best, nil
}

// candidates lists the configurations of a kind on g capped by c: its
// Candidates, or one fit with the defaults.
func candidates(kind recsys.Kind, g recsys.Grid, c recsys.Caps) []recsys.Params {
	var out []recsys.Params
	if kind.Candidates != nil {
		out = kind.Candidates(g, c)
	}
	if len(out) == 0 {
		out = []recsys.Params{{}}
	}
	return out
}

// dataCaps are the limits of the training matrix on k: the longest item
// neighbour list in cache (built on train) and |U| − 1.
func dataCaps(ctx context.Context, train *recsys.Matrix, cache *recsys.NeighbourCache) (recsys.Caps, error) {
	items, err := cache.MaxRow(ctx, nil)
	if err != nil {
		return recsys.Caps{}, err
	}
	return recsys.Caps{Items: items, Users: train.Users() - 1}, nil
}

// validationUsers is the sample size of t: ValidationUsers, its default
// for 0, and 0 (all) for a negative value.
func (t Tuning) validationUsers() int {
	switch {
	case t.ValidationUsers == 0:
		return DefaultValidationUsers
	case t.ValidationUsers < 0:
		return 0
	}
	return t.ValidationUsers
}

// SampleUsers keeps the held-out items of n users drawn uniformly without
// replacement, by a generator seeded with seed (0: 1), among those with
// any; all of sets when n ≤ 0 or there are not more such users. The same
// seed gives the same sample.
func SampleUsers(sets [][]uint32, n int, seed uint64) [][]uint32 {
	var users []int
	for u, v := range sets {
		if len(v) > 0 {
			users = append(users, u)
		}
	}
	if n <= 0 || len(users) <= n {
		return sets
	}
	if seed == 0 {
		seed = 1
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a3b1e))
	// A partial Fisher–Yates shuffle draws the first n.
	for k := range n {
		j := k + rng.IntN(len(users)-k)
		users[k], users[j] = users[j], users[k]
	}
	out := make([][]uint32, len(sets))
	for _, u := range users[:n] {
		out[u] = sets[u]
	}
	return out
}
