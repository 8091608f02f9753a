package jobs

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"recsys/api"
	"recsys/recsys"
	"recsys/recsys/eval"
	"recsys/recsys/metrics"
	_ "recsys/recsys/mf" // registers bpr, wrmf and mfauc
	"recsys/recsys/serving"
)

// TrainOptions configure model fitting in the service.
type TrainOptions struct {
	// Grid is the main-parameter grid k of dissertation §4.7.3, capped by
	// the data; the service uses a shorter grid than offline evaluation by
	// default to keep retraining quick.
	Grid []int
	// SLIM is the grid of fsSLIM (ℓ1, ℓ2) pairs tried for every k.
	SLIM [][2]float64
	// Factors is the grid of the number of factors of bpr, wrmf and
	// mfauc, and MF the secondary settings (recsys.Params.Extra) tried for
	// each, by model; a model missing from MF tries its defaults only.
	Factors []int
	MF      map[string][]map[string]float64
	// FEBRLambda is FEBR's λ grid, tried for every k (nil:
	// DefaultFEBRLambda).
	FEBRLambda []float64
	// Seed seeds the validation split.
	Seed int64
	// ValidationUsers caps the users whose validation items score each
	// grid point (0: all). Validation ranks every item for every user, so
	// at 10⁵ users × 10⁴ items it costs more than the fits; an evenly
	// spaced subset keeps tuning affordable there.
	ValidationUsers int
}

// DefaultTrainOptions are the service's training defaults.
var DefaultTrainOptions = TrainOptions{
	Grid: []int{10, 20, 50, 100, 200},
	SLIM: [][2]float64{{1, 1}, {0.1, 1}},
	// Shorter than evaluation's grids (eval.DefaultGrid, mfgrid.go).
	Factors: []int{10, 50},
	MF: map[string][]map[string]float64{
		"bpr":  {{"lambda": 0.025}, {"lambda": 0.0025}},
		"wrmf": {{"alpha": 1}, {"alpha": 0.01}},
	},
	Seed: 1,
}

// DefaultModels are trained when a job names none.
var DefaultModels = []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "febr", serving.ContentModelName}

// AutoModels are the candidates of an auto training job that names none
// (issues 5 and 6): the popularity baseline, the neighbourhood models,
// every FEBR variant ("febr" is FEBRi-slim, so febr-i-slim is left out)
// and the matrix factorisations.
var AutoModels = []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim",
	"febr", "febr-i-cosine", "febr-u-cosine", "febr-iu-cosine", "febr-i-kunn", "febr-u-kunn", "febr-iu-kunn",
	"bpr", "wrmf", "mfauc"}

// trained is one fitted model ready to persist and serve.
type trained struct {
	served *serving.Served
	blob   []byte
}

// stageFunc reports the start of a stage and the share of work done.
type stageFunc func(stage string, done float64)

// trainModels fits each model on the snapshot: the main and secondary
// parameters are chosen on a 10% validation split by ADG (§4.7.3), then the
// model is refitted with them on all the data.
func trainModels(ctx context.Context, snap *api.Snapshot, names []string, opts TrainOptions, stage stageFunc) ([]trained, error) {
	if len(snap.Users) == 0 {
		return nil, api.Errorf(api.CodeConflict, "there are no relevant interactions to train on")
	}
	x, err := snapshotMatrix(snap)
	if err != nil {
		return nil, err
	}
	stage("validation split", 0)
	split, err := eval.NewSplit(&eval.Dataset{UserIDs: snap.UserIDs, ItemIDs: snap.ItemIDs, Users: snap.Users, Items: snap.Items},
		eval.Standard, opts.Seed, 0, eval.DefaultMinPositives)
	if err != nil {
		return nil, err
	}
	valCache := recsys.NewNeighbourCache(split.Train, slices.Max(opts.Grid))
	fullCache := recsys.NewNeighbourCache(x, slices.Max(opts.Grid))
	var out []trained
	for k, name := range names {
		frac := func(f float64) float64 { return (float64(k) + f) / float64(len(names)) }
		stage("tune "+name, frac(0))
		start := time.Now()
		p, val, err := tune(ctx, name, split, valCache, opts)
		if err != nil {
			return nil, fmt.Errorf("tuning %s: %w", name, err)
		}
		stage("fit "+name, frac(0.7))
		m, err := recsys.New(name)
		if err != nil {
			return nil, err
		}
		p.Cache = fullCache
		if err := m.Fit(ctx, x, p); err != nil {
			return nil, fmt.Errorf("fitting %s: %w", name, err)
		}
		blob, err := m.MarshalBinary()
		if err != nil {
			return nil, err
		}
		info := api.ModelInfo{Name: name, TrainedAt: time.Now().UTC(), Users: countIDs(snap.UserIDs), Items: countIDs(snap.ItemIDs),
			Positives: x.NNZ(), Params: recsys.ParamsOf(m), TrainSeconds: time.Since(start).Seconds(),
			Validation: map[string]float64{}}
		for i, key := range metrics.Names {
			info.Validation[key] = val[i]
		}
		out = append(out, trained{served: &serving.Served{Info: info, Model: m}, blob: blob})
	}
	return out, nil
}

// tune returns the parameters with the best validation ADG and the
// validation measures they reach.
func tune(ctx context.Context, name string, split *eval.Split, cache *recsys.NeighbourCache, opts TrainOptions) (recsys.Params, metrics.Values, error) {
	if recsys.IsFEBR(name) {
		return tuneFEBR(ctx, name, split, cache, opts)
	}
	var cands []recsys.Params
	switch name {
	case "popular":
		cands = []recsys.Params{{}}
	case "slim":
		for _, k := range opts.Grid {
			for _, l := range opts.SLIM {
				cands = append(cands, recsys.Params{K: k, L1: l[0], L2: l[1]})
			}
		}
	case "bpr", "wrmf", "mfauc":
		secondary := opts.MF[name]
		if len(secondary) == 0 {
			secondary = []map[string]float64{nil}
		}
		factors := opts.Factors
		if len(factors) == 0 {
			factors = []int{0} // the model's default
		}
		for _, k := range factors {
			for _, e := range secondary {
				cands = append(cands, recsys.Params{K: k, Extra: e})
			}
		}
	default:
		for _, k := range opts.Grid {
			cands = append(cands, recsys.Params{K: k})
		}
	}
	var best recsys.Params
	var bestVal metrics.Values
	bestADG := -1.0
	for _, p := range cands {
		m, err := recsys.New(name)
		if err != nil {
			return p, bestVal, err
		}
		p.Cache = cache
		if err := m.Fit(ctx, split.Train, p); err != nil {
			return p, bestVal, err
		}
		val, err := validate(ctx, m, split, opts.ValidationUsers)
		if err != nil {
			return p, bestVal, err
		}
		if val[metrics.MADG] > bestADG {
			best, bestVal, bestADG = p, val, val[metrics.MADG]
		}
	}
	best.Cache = nil
	return best, bestVal, nil
}

// validate is the mean of every measure over users with validation items.
func validate(ctx context.Context, m recsys.Model, split *eval.Split, maxUsers int) (metrics.Values, error) {
	pop := split.Train.Popularity()
	nItems := split.Train.Items()
	var (
		mu    sync.Mutex
		sum   metrics.Values
		users int
	)
	var users32 []int
	for u, v := range split.Validation {
		if len(v) > 0 {
			users32 = append(users32, u)
		}
	}
	if maxUsers > 0 && len(users32) > maxUsers {
		sub := make([]int, maxUsers)
		for k := range sub {
			sub[k] = users32[k*len(users32)/maxUsers]
		}
		users32 = sub
	}
	err := parallelRange(ctx, len(users32), func(lo, hi int) {
		scores := make([]float64, nItems)
		var local metrics.Values
		for _, u := range users32[lo:hi] {
			hist := split.Train.Row(u)
			recsys.ScoreUser(m, u, hist, scores)
			ranks := recsys.Ranks(scores, pop, hist, split.Validation[u])
			v := metrics.All(ranks, nItems-len(hist))
			for i := range local {
				local[i] += v[i]
			}
		}
		mu.Lock()
		for i := range sum {
			sum[i] += local[i]
		}
		users += hi - lo
		mu.Unlock()
	})
	if err != nil || users == 0 {
		return sum, err
	}
	for i := range sum {
		sum[i] /= float64(users)
	}
	return sum, nil
}

// parallelRange splits [0, n) into chunks over two workers per core.
func parallelRange(ctx context.Context, n int, fn func(lo, hi int)) error {
	const chunk = 64
	var wg sync.WaitGroup
	next := make(chan int)
	workers := 4
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range next {
				fn(lo, min(lo+chunk, n))
			}
		}()
	}
	var err error
	for lo := 0; lo < n; lo += chunk {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- lo
	}
	close(next)
	wg.Wait()
	return err
}

// countIDs counts the live ids (dense index 0 and deleted ones are empty).
func countIDs(ids []string) int {
	n := 0
	for _, id := range ids {
		if id != "" {
			n++
		}
	}
	return n
}

// snapshotMatrix is X of a snapshot, indexed by the store's dense indices.
func snapshotMatrix(snap *api.Snapshot) (*recsys.Matrix, error) {
	pairs := make([]recsys.Pair, len(snap.Users))
	for k := range snap.Users {
		pairs[k] = recsys.Pair{User: snap.Users[k], Item: snap.Items[k]}
	}
	return recsys.NewMatrix(len(snap.UserIDs), len(snap.ItemIDs), pairs)
}
