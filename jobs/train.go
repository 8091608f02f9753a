package jobs

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
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
	// ContentApproxAbove is the server's --content-approx-above: above it
	// the content model's HNSW graph is built at training and persisted
	// with the model (recsys.TrainData.ContentApproxAbove).
	ContentApproxAbove int
	// Budget is the training budget (zero: none): a job skips an auto
	// addition predicted to take longer than its time left and any model
	// predicted to need more memory (fitGuard).
	Budget api.TrainBudget
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
		// Auto mode compares the models' validation ADGs: each on users
		// its search did not see (eval.Tuning.Nested).
		Nested: true,
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

// AutoModels are the recommenders auto mode compares (recsys.AutoNames:
// the default models' recommenders with ease, rp3beta, wrmf, ials and
// febr-blend), in fitOrder: febr-blend after its bases.
var AutoModels = fitOrder(recsys.AutoNames())

// AutoJobModels are the models of an auto job that names none on a server
// whose models are base: base, and the kinds of AutoModels it lacks, the
// additions, in fitOrder. The kinds of base that are not recommenders
// (the content metric) are trained as in any job; a training job fits
// the additions cheapest first within its training budget (fitAll).
func AutoJobModels(base []string) (models, added []string) {
	for _, n := range AutoModels {
		if !slices.Contains(base, n) {
			added = append(added, n)
		}
	}
	return fitOrder(slices.Concat(base, added)), added
}

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

// trained is one fitted model ready to persist and serve. Its blob is
// not held: publish encodes each model when it persists it, one at a
// time, so that a job at a million items does not keep every model's
// gigabytes of encoding beside the models themselves until the end.
type trained struct {
	served *serving.Served
}

// stageFunc reports the start of a stage and the share of work done.
type stageFunc func(stage string, done float64)

// runTrain runs training job j: it fits the job's models on a snapshot
// (fitAll), records the ones skipped, and publishes the others; the events
// of the snapshot then count as trained on.
func (s *Scheduler) runTrain(ctx context.Context, j *api.Job, rec *recorder) error {
	plan := fitPlan{names: j.Models, added: j.Additions, started: time.Now()}
	if j.StartedAt != nil {
		plan.started = *j.StartedAt
	}
	rec.stage("snapshot", 0)
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return err
	}
	models, skipped, err := fitAll(ctx, snap, plan, s.opts.Train, func(stage string, done float64) {
		rec.stage(stage, 0.05+0.75*done)
	})
	if err != nil {
		return err
	}
	for _, sk := range skipped {
		rec.skip(sk.Model, sk.Reason)
		s.log.Warn("a model of the training job was skipped", "model", sk.Model, "reason", sk.Reason, "job", j.ID)
	}
	if len(models) == 0 {
		s.log.Warn("the training job fitted no model: every one it was asked for was skipped (see its record)", "job", j.ID)
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

// fitPlan is what a training job fits: its models, the auto additions
// among them (api.Job.Additions), which the training budget's time may
// leave out, and when the job started, from which that time counts.
type fitPlan struct {
	names, added []string
	started      time.Time
}

// fitAll fits the models of plan: the recommenders through trainModelsOn,
// tuned on one validation split with shared neighbour caches, then each
// other kind by its trainer, in the job's order, when the recommenders'
// share of the progress is done. The recommenders are fitted in
// fitSequence's order: the named ones, then the additions cheapest first,
// each kind after the kinds whose fits it reuses. Before each kind the
// training budget may skip it (fitGuard). It returns the fitted models,
// and those skipped with the reason. X is built once for all.
func fitAll(ctx context.Context, snap *api.Snapshot, plan fitPlan, opts TrainOptions, stage stageFunc) ([]trained, []api.SkippedModel, error) {
	var recommenders, others []string
	for _, n := range plan.names {
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
	g := fitGuard{budget: opts.Budget, added: plan.added, shape: recsys.Shape{Users: x.Users(), Items: x.Items(), Positives: x.NNZ(), ValidationUsers: opts.ValidationUsers,
		Features: len(snap.FeatureNames), KMax: slices.Max(opts.Grid)}}
	check := g.check(plan.started)
	var deadline time.Time
	if opts.Budget.Time > 0 {
		deadline = plan.started.Add(opts.Budget.Time)
	}
	out, skipped, err := trainModelsOn(ctx, snap, x, fitSequence(recommenders, plan.added, g.shape), opts, stage, check, deadline)
	if err != nil {
		return nil, nil, err
	}
	fitted := len(out) > 0
	for _, name := range others {
		if why := check(name); why != "" {
			skipped = append(skipped, api.SkippedModel{Model: name, Reason: why})
			continue
		}
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
	if fitted {
		stage("serving cost", 1)
		if err := measureServingCost(ctx, snap, x, out, opts.Seed); err != nil {
			return nil, nil, err
		}
	}
	return out, skipped, nil
}

// fitSequence is the order a job fits its recommenders in: those it
// names, in their order, then its auto additions (added) cheapest first
// by their predicted time at shape (a kind without a prediction last), so
// that the training budget leaves the slowest behind; each kind after the
// kinds whose fits it reuses (fitOrder: febr-blend after its bases).
func fitSequence(recommenders, added []string, shape recsys.Shape) []string {
	var named, adds []string
	for _, n := range recommenders {
		if slices.Contains(added, n) {
			adds = append(adds, n)
		} else {
			named = append(named, n)
		}
	}
	seconds := func(n string) float64 {
		if c, ok := recsys.CostOf(n, shape); ok && c.Seconds > 0 {
			return c.Seconds
		}
		return math.Inf(1)
	}
	slices.SortStableFunc(adds, func(a, b string) int { return cmp.Compare(seconds(a), seconds(b)) })
	return fitOrder(slices.Concat(named, adds))
}

// fitGuard is a job's training budget at its data's shape.
type fitGuard struct {
	budget api.TrainBudget
	added  []string
	shape  recsys.Shape
}

// reason is why the job skips the kind name once it has run for spent,
// "" when it fits it: its predicted memory (recsys.CostOf) exceeds the
// budget's, or, for an auto addition, its predicted time exceeds the
// budget's time left. A kind without a prediction is fitted.
func (g fitGuard) reason(name string, spent time.Duration, held int64) string {
	c, ok := recsys.CostOf(name, g.shape)
	if !ok {
		return ""
	}
	if limit := g.budget.Memory; limit > 0 && c.Bytes+held > limit {
		if c.Bytes <= limit {
			return fmt.Sprintf("needs about %s at %s users × %s items (%s) beside the %s the kinds fitted before it keep; the memory budget is %s (--train-memory)",
				api.FormatBytes(c.Bytes), recsys.FormatCount(int64(g.shape.Users)), recsys.FormatCount(int64(g.shape.Items)), c.Memory, api.FormatBytes(held), api.FormatBytes(limit))
		}
		return fmt.Sprintf("needs about %s at %s users × %s items (%s); the memory budget is %s (--train-memory)",
			api.FormatBytes(c.Bytes), recsys.FormatCount(int64(g.shape.Users)), recsys.FormatCount(int64(g.shape.Items)), c.Memory, api.FormatBytes(limit))
	}
	if limit := g.budget.Time; limit > 0 && c.Seconds > 0 && slices.Contains(g.added, name) {
		if left := max(0, limit-spent); c.Seconds > left.Seconds() {
			return fmt.Sprintf("predicted %s at %s positives × %s items exceeds the %s left of --train-budget %s; raise --train-budget or name it in --models",
				formatSeconds(c.Seconds), recsys.FormatCount(int64(g.shape.Positives)), recsys.FormatCount(int64(g.shape.Items)),
				formatSeconds(left.Seconds()), api.FormatTrainTime(limit))
		}
	}
	return ""
}

// check returns the guard of a job started at started: the reason it
// skips a kind (reason), asked once before each kind starts. A job
// searches every kind before it refits any (trainModelsOn), so the time
// a kind admitted will take counts as spent when it is admitted: the
// budget left is what neither the time spent nor the predictions of the
// kinds admitted take. Likewise the memory the kinds admitted keep once
// fitted (recsys.Cost.Kept) counts against the memory budget of the kinds
// after them.
//
// A kind that reuses the fit of a kind the job skipped (febr of slim,
// febr-blend of its bases) is skipped too: it would fit that kind itself,
// which its own prediction leaves out.
func (g fitGuard) check(started time.Time) func(name string) string {
	var admitted time.Duration
	var held int64
	skipped := map[string]bool{}
	return func(name string) string {
		why := ""
		if kind, err := recsys.KindOf(name); err == nil {
			for _, r := range kind.Reuses {
				if skipped[r] {
					why = fmt.Sprintf("it reuses %s, which this job skipped, and would fit it itself", r)
					break
				}
			}
		}
		if why == "" {
			why = g.reason(name, max(time.Since(started), admitted), held)
		}
		if why != "" {
			skipped[name] = true
		} else if c, ok := recsys.CostOf(name, g.shape); ok {
			admitted += time.Duration(c.Seconds * float64(time.Second))
			held += c.Kept
		}
		return why
	}
}

// memoryMaxK bounds the extension of a kind's k past the grid by the
// memory budget: the largest k of the doublings of the grid's largest
// (the extension's steps) at which the kind's predicted memory at shape
// stays within limit, 0 when the budget does not bound it (no limit, no
// prediction, or k capped by the data first).
func memoryMaxK(name string, limit int64, shape recsys.Shape) int {
	if limit <= 0 || shape.KMax <= 0 {
		return 0
	}
	at := shape
	for k := shape.KMax; k < 1<<24; k *= 2 {
		next := at
		next.KMax = 2 * k
		if next.K() == at.K() && next.UserK() == at.UserK() {
			return 0 // the data caps k
		}
		c, ok := recsys.CostOf(name, next)
		if !ok {
			return 0
		}
		if c.Bytes > limit {
			return k
		}
		at = next
	}
	return 0
}

// formatSeconds writes a time in the unit a reader thinks of it in: "40
// s", "41 min", "2.5 h".
func formatSeconds(s float64) string {
	switch {
	case s < 90:
		return fmt.Sprintf("%.0f s", s)
	case s < 90*60:
		return fmt.Sprintf("%.0f min", s/60)
	default:
		return fmt.Sprintf("%.1f h", s/3600)
	}
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
		Seed: uint64(opts.Seed), ContentApproxAbove: opts.ContentApproxAbove, Enter: enter})
	if err != nil || t == nil {
		return nil, why, err
	}
	// Validation holds the recommenders' measures, compared across
	// models: other kinds have none.
	info := api.ModelInfo{Name: name, TrainedAt: time.Now().UTC(), Users: countIDs(snap.UserIDs),
		Items: t.Items, Positives: len(snap.Users), TrainSeconds: time.Since(start).Seconds(),
		Params: t.Params, Validation: map[string]float64{}}
	return &trained{served: &serving.Served{Info: info, Model: t.Model}}, "", nil
}

// trainModelsOn fits each recommender on x, the snapshot's matrix: the
// main and secondary parameters are chosen on a 10% validation split by
// ADG (dissertation §4.7.3), then the model is refitted with them on all
// the data. Every search runs first (tuneAll), then every refit, so that
// each phase holds one matrix's neighbour lists: at a million items they
// take gigabytes per similarity. skip, when not nil, is asked before each
// kind starts: a reason leaves it out, recorded with the reason.
// deadline, when not zero, is when the job's training budget ends, which
// bounds every search (tuneAll).
func trainModelsOn(ctx context.Context, snap *api.Snapshot, x *recsys.Matrix, names []string, opts TrainOptions, stage stageFunc,
	skip func(name string) string, deadline time.Time) ([]trained, []api.SkippedModel, error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
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
	chosen, skipped, err := tuneAll(ctx, snap, x, names, opts, stage, skip, reused, fits, deadline)
	if err != nil {
		return nil, nil, err
	}
	clear(fits) // the split's fits are done with
	fullCache := recsys.NewNeighbourCache(x, slices.Max(opts.Grid))
	lastListUser := -1
	for k, c := range chosen {
		if readsItemLists(c.kind) {
			lastListUser = k
		}
	}
	var out []trained
	for k, c := range chosen {
		name, t := c.name, c.t
		stage("fit "+name, 0.7+0.3*float64(k)/float64(len(chosen)))
		start := time.Now()
		p, val := t.Refit, t.Validation
		m, err := recsys.New(name)
		if err != nil {
			return nil, nil, err
		}
		p.Cache = fullCache
		if c.kind.Reuse != nil {
			p = c.kind.Reuse.Refit(p, fits, x)
		}
		if err := m.Fit(ctx, x, p); err != nil {
			return nil, nil, fmt.Errorf("fitting %s: %w", name, err)
		}
		blob, err := m.MarshalBinary()
		if err != nil {
			return nil, nil, err
		}
		params := recsys.ParamsOf(m)
		// The model served is the one persisted, decoded from its blob:
		// it holds lists of its own where the fit's are views of the
		// job's neighbour cache at k_max (recsys.Neighbours.Truncate).
		// The fit and, after the last kind that reads them, the cache's
		// lists are let go first, so that at a million items the decoded
		// copy does not sit beside two others.
		m = nil
		if k == lastListUser {
			fullCache.Release()
		}
		if len(blob) > largeBlob {
			runtime.GC() // reclaim them before the copy is allocated
		}
		served, err := recsys.Load(blob)
		blob = nil // publish encodes the served copy again, to the same bytes
		if err != nil {
			return nil, nil, fmt.Errorf("decoding %s: %w", name, err)
		}
		info := api.ModelInfo{Name: name, TrainedAt: time.Now().UTC(), Users: countIDs(snap.UserIDs), Items: countIDs(snap.ItemIDs),
			Positives: x.NNZ(), Params: params, TrainSeconds: c.seconds + time.Since(start).Seconds(),
			Validation: map[string]float64{}, GridExtended: t.Extended, GridEdge: t.AtEdge, GridSkipped: t.Skipped}
		for i, key := range metrics.Names {
			info.Validation[key] = val[i]
		}
		out = append(out, trained{served: &serving.Served{Info: info, Model: served}})
		if reused[name] {
			fits[name] = recsys.Fit{Full: served, FullParams: p} // one copy: the one served
		}
	}
	return out, skipped, nil
}

// largeBlob is the size of a persisted model above which a job collects
// its garbage before decoding the served copy: hundreds of megabytes at a
// million items, where waiting for the next cycle would hold both.
const largeBlob = 256 << 20

// readsItemLists reports whether a kind may read the item neighbour lists
// of a training job's cache: those with item lists of their own (a
// similar-items rank), a grid fitted at once (fsSLIM, EASE, RP³β) or
// other kinds' fits (FEBR).
func readsItemLists(k recsys.Kind) bool {
	return k.Service.SimilarRank > 0 || k.FitGrid != nil || len(k.Reuses) > 0
}

// tuned is one kind's search in a training job: its choice (the tuned
// model dropped) and how long the search took.
type tuned struct {
	name    string
	kind    recsys.Kind
	t       *eval.Tuned
	seconds float64
}

// tuneAll searches each kind of names on a validation split of the
// snapshot, in order, leaving out those skip gives a reason for, and
// records in fits the tuned models of the kinds reused. Every search ends
// by deadline (eval.Tuning.Deadline; zero: none), the end of the job's
// training budget, the time left when it starts: it skips the grid points
// and extension steps predicted past it, and the model's record lists
// them (api.ModelInfo.GridSkipped). A search fits its first point
// whatever the time left, so that a kind admitted always has a model.
func tuneAll(ctx context.Context, snap *api.Snapshot, x *recsys.Matrix, names []string, opts TrainOptions, stage stageFunc,
	skip func(name string) string, reused map[string]bool, fits map[string]recsys.Fit, deadline time.Time) ([]tuned, []api.SkippedModel, error) {
	stage("validation split", 0)
	split, err := eval.NewSplit(&eval.Dataset{UserIDs: snap.UserIDs, ItemIDs: snap.ItemIDs, Users: snap.Users, Items: snap.Items},
		eval.Standard, opts.Seed, 0, eval.DefaultMinPositives)
	if err != nil {
		return nil, nil, err
	}
	if split.Train, err = split.Train.WithDaysOf(x); err != nil {
		return nil, nil, err
	}
	valCache := recsys.NewNeighbourCache(split.Train, slices.Max(opts.Grid))
	// The kinds that learn from the split's validation items themselves
	// (febr-blend's θ at scale) take the tuning half only: the other
	// half scores every model for auto mode (eval.Tuning.Nested).
	tuneVal, _ := opts.tuning(recsys.Kind{}).Halves(split.Validation)
	holdout := recsys.Holdout{Train: split.Train, Validation: tuneVal}
	large := x.NNZ() > scalePositives
	shape := recsys.Shape{Users: x.Users(), Items: x.Items(), Positives: x.NNZ(), KMax: slices.Max(opts.Grid), ValidationUsers: opts.ValidationUsers}
	var out []tuned
	var skipped []api.SkippedModel
	for k, name := range names {
		if skip != nil {
			if why := skip(name); why != "" {
				skipped = append(skipped, api.SkippedModel{Model: name, Reason: why})
				continue
			}
		}
		stage("tune "+name, 0.7*float64(k)/float64(len(names)))
		start := time.Now()
		kind, err := recsys.KindOf(name)
		if err != nil {
			return nil, nil, err
		}
		tuning := opts.tuning(kind)
		scaleTuning(name, x.NNZ(), &tuning)
		tuning.MaxK = memoryMaxK(name, opts.Budget.Memory, shape)
		tuning.Deadline = deadline
		if kind.Reuse != nil {
			tuning.Options = kind.Reuse.Search(tuning.Options, fits, holdout, large)
		}
		t, err := eval.Tune(ctx, name, split, valCache, tuning)
		if err != nil {
			return nil, nil, fmt.Errorf("tuning %s: %w", name, err)
		}
		if reused[name] {
			fits[name] = recsys.Fit{Tuned: t.Model, TunedParams: t.Params}
		}
		t.Model = nil // the refit replaces it
		out = append(out, tuned{name: name, kind: kind, t: t, seconds: time.Since(start).Seconds()})
	}
	return out, skipped, nil
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

// snapshotMatrix is X of a snapshot, indexed by the store's dense indices,
// with the day of each pair when the snapshot has them.
func snapshotMatrix(snap *api.Snapshot) (*recsys.Matrix, error) {
	pairs := make([]recsys.Pair, len(snap.Users))
	for k := range snap.Users {
		pairs[k] = recsys.Pair{User: snap.Users[k], Item: snap.Items[k]}
	}
	if len(snap.Days) == len(pairs) {
		return recsys.NewTimedMatrix(len(snap.UserIDs), len(snap.ItemIDs), pairs, snap.Days)
	}
	return recsys.NewMatrix(len(snap.UserIDs), len(snap.ItemIDs), pairs)
}
