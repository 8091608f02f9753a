package jobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/eval"
	"github.com/recsys-engine/recsys/recsys/metrics"
	"github.com/recsys-engine/recsys/recsys/serving"
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
	// Lambda is the λ grid of the kinds that search one (FEBR's
	// regularisation), tried for every k (nil: DefaultTrainOptions').
	Lambda []float64
	// Seed seeds the validation split.
	Seed int64
	// ValidationUsers caps the users whose validation items score each
	// grid point (0: all). Validation ranks every item for every user, so
	// at 10⁵ users × 10⁴ items it costs more than the fits; an evenly
	// spaced subset keeps tuning affordable there.
	ValidationUsers int
}

// tuning is o as eval.Tune's configuration of kind: the grid, the
// validation users and seed, and the options the kind's service fits
// start from (recsys.Service.Options). The FEBR variants choose k (and for
// the SLIM affinity the fsSLIM constants) by the validation ADG of the
// aggsum predictor OPT-ADG starts from (Grid.KByBaseline), which keeps
// retraining quick, then λ by OPT-ADG stopping early on the validation
// ADG; they refit on all the data with the iteration count that reached
// the chosen θ (recsys.Choice.Refit).
func (o TrainOptions) tuning(kind recsys.Kind) eval.Tuning {
	lambdas := o.Lambda
	if len(lambdas) == 0 {
		lambdas = DefaultTrainOptions.Lambda
	}
	t := eval.Tuning{
		Grid:            recsys.Grid{K: o.Grid, SLIM: o.SLIM, Factors: o.Factors, Extra: o.MF, Lambda: lambdas, KByBaseline: true},
		ValidationUsers: o.ValidationUsers,
		SampleSeed:      uint64(o.Seed),
	}
	if kind.Service.Options != nil {
		t.Options = kind.Service.Options(uint64(o.Seed))
	}
	return t
}

// DefaultTrainOptions are the service's training defaults: the main
// parameter's grid and seed here, every other dimension as the kinds
// declare it (recsys.Service.Grid and Settings: shorter than evaluation's
// grids, eval.DefaultGrid and mfgrid.go).
var DefaultTrainOptions = serviceOptions()

// serviceOptions are DefaultTrainOptions: k ∈ {10, 20, 50, 100, 200} and
// the union of the kinds' service grids, in registration order.
func serviceOptions() TrainOptions {
	o := TrainOptions{Grid: []int{10, 20, 50, 100, 200}, MF: map[string][]map[string]float64{}, Seed: 1}
	for _, n := range recsys.Kinds() {
		kind, _ := recsys.KindOf(n)
		g := kind.Service.Grid
		o.SLIM = union(o.SLIM, g.SLIM)
		o.Factors = union(o.Factors, g.Factors)
		o.Lambda = union(o.Lambda, g.Lambda)
		for _, s := range kind.Service.Settings {
			o.MF[n] = append(o.MF[n], maps.Clone(s))
		}
	}
	return o
}

// union is a followed by the values of b it lacks.
func union[T comparable](a, b []T) []T {
	for _, v := range b {
		if !slices.Contains(a, v) {
			a = append(a, v)
		}
	}
	return a
}

// DefaultModels are trained when a job names none: the kinds the registry
// marks so (recsys.Defaults).
var DefaultModels = recsys.Defaults()

// AutoModels are the candidates of an auto training job that names none
// (recsys.AutoNames: the popularity baseline, the neighbourhood models,
// EASE and RP3β, every FEBR variant, febr-blend and the matrix
// factorisations), in the order a job fits them (fitOrder: febr-blend
// after its bases wrmf and ials).
var AutoModels = fitOrder(recsys.AutoNames())

// fitOrder is names with each kind after the kinds it reuses
// (recsys.Kind.Reuses) that names holds, and otherwise in names' order.
func fitOrder(names []string) []string {
	var out []string
	placed := map[string]bool{}
	var place func(string)
	place = func(n string) {
		if placed[n] {
			return
		}
		placed[n] = true
		if kind, err := recsys.KindOf(n); err == nil {
			for _, r := range kind.Reuses {
				if slices.Contains(names, r) {
					place(r)
				}
			}
		}
		out = append(out, n)
	}
	for _, n := range names {
		place(n)
	}
	return out
}

// trained is one fitted model ready to persist and serve.
type trained struct {
	served *serving.Served
	blob   []byte
}

// stageFunc reports the start of a stage and the share of work done.
type stageFunc func(stage string, done float64)

// runTrain runs training job j: it fits the job's models on a snapshot
// (fitAll), records the ones skipped, and publishes the others; the events
// of the snapshot then count as trained on.
func (s *Scheduler) runTrain(ctx context.Context, j *api.Job, rec *recorder) error {
	rec.stage("snapshot", 0)
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return err
	}
	models, skipped, err := fitAll(ctx, snap, j.Models, s.opts.Train, func(stage string, done float64) {
		rec.stage(stage, 0.05+0.75*done)
	})
	if err != nil {
		return err
	}
	for _, sk := range skipped {
		rec.skip(sk.Model, sk.Reason)
	}
	rec.stage("persist and swap", 0.9)
	if err := s.publish(ctx, j, models); err != nil {
		return err
	}
	s.mu.Lock()
	s.lastTrained = snap.Events
	s.mu.Unlock()
	return nil
}

// fitAll fits the models a job names: the recommenders through
// trainModels, tuned on one validation split with shared neighbour caches,
// then each other kind by its trainer, in the job's order, when the
// recommenders' share of the progress is done. The recommenders are
// fitted in fitOrder: a kind after the kinds whose fits it reuses, which
// may differ from the order the job names them in. It returns the fitted
// models, and those skipped with the reason. X is built once for all.
func fitAll(ctx context.Context, snap *api.Snapshot, names []string, opts TrainOptions, stage stageFunc) ([]trained, []api.SkippedModel, error) {
	var recommenders, others []string
	for _, n := range names {
		if recsys.Recommends(n) {
			recommenders = append(recommenders, n)
		} else {
			others = append(others, n)
		}
	}
	if len(snap.Users) == 0 {
		return nil, nil, api.Errorf(api.CodeConflict, "there are no relevant interactions to train on")
	}
	x, err := snapshotMatrix(snap)
	if err != nil {
		return nil, nil, err
	}
	out, err := trainModelsOn(ctx, snap, x, fitOrder(recommenders), opts, stage)
	if err != nil {
		return nil, nil, err
	}
	var skipped []api.SkippedModel
	for _, name := range others {
		t, why, err := trainOther(ctx, snap, x, name, opts, func(s string) { stage(s, 1) })
		if err != nil {
			return nil, nil, err
		}
		if t == nil {
			skipped = append(skipped, api.SkippedModel{Model: name, Reason: why})
			continue
		}
		out = append(out, *t)
	}
	if len(recommenders) > 0 {
		stage("serving cost", 1)
		if err := measureServingCost(ctx, snap, x, out, opts.Seed); err != nil {
			return nil, nil, err
		}
	}
	return out, skipped, nil
}

// measureServingCost times the recommenders of models on the snapshot's
// users (serving.CostProbe: one fixed sample for all, drawn with the
// job's seed) and records the figures in their records, which persist
// them with the version.
func measureServingCost(ctx context.Context, snap *api.Snapshot, x *recsys.Matrix, models []trained, seed int64) error {
	probe := serving.NewCostProbe(snap, x, serving.CostOptions{Seed: uint64(seed)})
	for _, t := range models {
		if !recsys.Recommends(t.served.Info.Name) {
			continue
		}
		c, err := probe.Measure(ctx, t.served)
		if err != nil {
			return fmt.Errorf("measuring the serving cost of %s: %w", t.served.Info.Name, err)
		}
		t.served.Info.ServingCost = &c
	}
	return nil
}

// trainOther fits a kind that is not a recommender by its registered
// Train: the model ready to persist and serve, or, when the data cannot
// support it, nil and the reason, which the job records
// (api.Job.Skipped). enter is called as each stage of the fit starts.
func trainOther(ctx context.Context, snap *api.Snapshot, x *recsys.Matrix, name string, opts TrainOptions, enter func(stage string)) (_ *trained, skipped string, _ error) {
	kind, err := recsys.KindOf(name)
	if err != nil || kind.Train == nil {
		return nil, "", fmt.Errorf("model %q has no trainer", name)
	}
	start := time.Now()
	t, why, err := kind.Train(ctx, recsys.TrainData{X: x, FeatureNames: snap.FeatureNames, Features: snap.Features,
		Seed: uint64(opts.Seed), Enter: enter})
	if err != nil || t == nil {
		return nil, why, err
	}
	blob, err := t.Model.MarshalBinary()
	if err != nil {
		return nil, "", err
	}
	// Validation holds the recommenders' measures, compared across
	// models: other kinds have none.
	info := api.ModelInfo{Name: name, TrainedAt: time.Now().UTC(), Users: countIDs(snap.UserIDs),
		Items: t.Items, Positives: len(snap.Users), TrainSeconds: time.Since(start).Seconds(),
		Params: t.Params, Validation: map[string]float64{}}
	return &trained{served: &serving.Served{Info: info, Model: t.Model}, blob: blob}, "", nil
}

// trainModelsOn fits each recommender on x, the snapshot's matrix: the
// main and secondary parameters are chosen on a 10% validation split by
// ADG (dissertation §4.7.3), then the model is refitted with them on all
// the data.
func trainModelsOn(ctx context.Context, snap *api.Snapshot, x *recsys.Matrix, names []string, opts TrainOptions, stage stageFunc) ([]trained, error) {
	stage("validation split", 0)
	split, err := eval.NewSplit(&eval.Dataset{UserIDs: snap.UserIDs, ItemIDs: snap.ItemIDs, Users: snap.Users, Items: snap.Items},
		eval.Standard, opts.Seed, 0, eval.DefaultMinPositives)
	if err != nil {
		return nil, err
	}
	valCache := recsys.NewNeighbourCache(split.Train, slices.Max(opts.Grid))
	fullCache := recsys.NewNeighbourCache(x, slices.Max(opts.Grid))
	var out []trained
	// The job's fits of the kinds that a later kind of the job reuses
	// (recsys.Kind.Reuses), which it takes instead of fitting them again.
	// Only those are kept: every tuned model held to the end of the job
	// would add gigabytes at 20M events.
	reused := map[string]bool{}
	for _, n := range names {
		kind, _ := recsys.KindOf(n)
		for _, r := range kind.Reuses {
			reused[r] = true
		}
	}
	fits := map[string]recsys.Fit{}
	holdout := recsys.Holdout{Train: split.Train, Validation: split.Validation}
	large := x.NNZ() > scalePositives
	for k, name := range names {
		frac := func(f float64) float64 { return (float64(k) + f) / float64(len(names)) }
		stage("tune "+name, frac(0))
		start := time.Now()
		kind, err := recsys.KindOf(name)
		if err != nil {
			return nil, err
		}
		tuning := opts.tuning(kind)
		scaleTuning(name, x.NNZ(), &tuning)
		if kind.Reuse != nil {
			tuning.Options = kind.Reuse.Search(tuning.Options, fits, holdout, large)
		}
		t, err := eval.Tune(ctx, name, split, valCache, tuning)
		if err != nil {
			return nil, fmt.Errorf("tuning %s: %w", name, err)
		}
		p, val := t.Refit, t.Validation
		stage("fit "+name, frac(0.7))
		m, err := recsys.New(name)
		if err != nil {
			return nil, err
		}
		p.Cache = fullCache
		if kind.Reuse != nil {
			p = kind.Reuse.Refit(p, fits, x)
		}
		if err := m.Fit(ctx, x, p); err != nil {
			return nil, fmt.Errorf("fitting %s: %w", name, err)
		}
		blob, err := m.MarshalBinary()
		if err != nil {
			return nil, err
		}
		// The model served is the one persisted, decoded from its blob:
		// it holds lists of its own where the fit's are views of the
		// job's neighbour cache at k_max (recsys.Neighbours.Truncate),
		// which the job frees when it ends.
		served, err := recsys.Load(blob)
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", name, err)
		}
		info := api.ModelInfo{Name: name, TrainedAt: time.Now().UTC(), Users: countIDs(snap.UserIDs), Items: countIDs(snap.ItemIDs),
			Positives: x.NNZ(), Params: recsys.ParamsOf(m), TrainSeconds: time.Since(start).Seconds(),
			Validation: map[string]float64{}, GridExtended: t.Extended, GridEdge: t.AtEdge}
		for i, key := range metrics.Names {
			info.Validation[key] = val[i]
		}
		out = append(out, trained{served: &serving.Served{Info: info, Model: served}, blob: blob})
		if reused[name] {
			fits[name] = recsys.Fit{Tuned: t.Model, TunedParams: t.Params, Full: m, FullParams: p}
		}
	}
	return out, nil
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
