package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/eval"
)

// Activate makes a served model the default and records it, so a restart
// serves it too. A model over the serving budget is activated all the
// same, and the warning says by how much.
func (s *Scheduler) Activate(ctx context.Context, name string) (warning string, err error) {
	if !recsys.Recommends(name) {
		if recsys.Known(name) {
			return "", api.Errorf(api.CodeNotFound, "%q is not a recommender and cannot answer recommendations", name)
		}
		return "", api.Errorf(api.CodeNotFound, "unknown model %q", name)
	}
	loading := s.eng.Loading(name) // before Lookup: a load ends by serving the model
	m := s.eng.Lookup(name)
	if m == nil {
		if loading { // not eng.Activate: the load may end meanwhile, and the choice go unrecorded
			return "", api.ModelLoading(name)
		}
		return "", api.Errorf(api.CodeNotFound, "model %q is not trained yet", name)
	}
	if err := s.st.SetActiveModel(ctx, name); err != nil {
		return "", err
	}
	if err := s.eng.Activate(name); err != nil {
		return "", err
	}
	return s.opts.Budget.Warning(name, m.Info.ServingCost), nil
}

// chooseActive picks the model a training job activates when the job is
// an auto job or no model is active (otherwise it keeps the active model:
// ""), and lists the candidates over the serving budget (chooseWithin).
// Whether one is active is the store's record, served here: what the
// engine serves by default can be a model installed before any was chosen
// (a start's first recommender loaded), which must not stop the first
// training from choosing.
func (s *Scheduler) chooseActive(ctx context.Context, models []trained, auto bool) (string, []api.OverBudget, error) {
	if !auto {
		cur, err := s.st.ActiveModel(ctx)
		if err != nil {
			return "", nil, err
		}
		if cur != "" && s.eng.Lookup(cur) != nil {
			return "", nil, nil
		}
	}
	name, over := chooseWithin(models, s.opts.Budget)
	return name, over, nil
}

// chooseWithin picks, among the trained recommenders of models, the one
// with the best validation ADG (dissertation §4.7.3's selection rule,
// eval.AutoChoice) among those within budget b, and lists the others
// with by how much they are over. When none is within, it picks the
// cheapest (the lowest mean cost, then p99, then the first): a machine
// sized by the budget is best served by the model that comes closest to
// it, and the candidates a job trains by default include popular, which
// serves from counts. A model whose cost was not measured is within.
func chooseWithin(models []trained, b api.ServeBudget) (string, []api.OverBudget) {
	var names []string
	var adg []float64
	var over []api.OverBudget
	cheapest := -1
	var cheapestCost *api.ServingCost
	for _, t := range models {
		in := t.served.Info
		if !recsys.Recommends(in.Name) {
			continue
		}
		if o, ok := b.Check(in.Name, in.ServingCost); ok {
			over = append(over, o)
			c := in.ServingCost
			if cheapest < 0 || c.MeanMS < cheapestCost.MeanMS || c.MeanMS == cheapestCost.MeanMS && c.P99MS < cheapestCost.P99MS {
				cheapest, cheapestCost = len(over)-1, c
			}
			continue
		}
		names = append(names, in.Name)
		adg = append(adg, in.Validation["adg"])
	}
	if len(names) == 0 && cheapest >= 0 {
		return over[cheapest].Model, over
	}
	if k := eval.AutoChoice(adg); k >= 0 {
		return names[k], over
	}
	return "", over
}

// publish persists the models of training job j, each encoded as it is
// written, installs them in the serving engine, and activates the one chooseActive picks, recording the
// choice and the candidates it passed over for their serving cost. Every
// model is persisted before any is swapped in: a crash in between leaves
// the new versions on disk and a restart serves them.
func (s *Scheduler) publish(ctx context.Context, j *api.Job, models []trained) error {
	bg := context.WithoutCancel(ctx)
	for _, t := range models {
		if err := ctx.Err(); err != nil {
			return err
		}
		v, err := s.st.NewModelVersion(bg)
		if err != nil {
			return err
		}
		t.served.Info.Version, t.served.Info.JobID = v, j.ID
		blob, err := t.served.Model.MarshalBinary()
		if err != nil {
			return fmt.Errorf("encoding %s: %w", t.served.Info.Name, err)
		}
		if err := s.st.PutModel(bg, t.served.Info, blob); err != nil {
			return err
		}
		j.Versions = append(j.Versions, t.served.Info.Name+"@"+v)
		if in := t.served.Info; len(in.GridExtended) > 0 || len(in.GridEdge) > 0 || len(in.GridSkipped) > 0 {
			j.Grid = append(j.Grid, api.GridNote{Model: in.Name, Extended: in.GridExtended, Edge: in.GridEdge, Skipped: in.GridSkipped})
		}
	}
	activate, over, err := s.chooseActive(bg, models, j.Auto)
	if err != nil {
		return err
	}
	j.OverBudget = over
	for _, o := range over {
		s.log.Warn("a candidate is over the serving budget", "model", o.Model, "mean_ms", o.MeanMS, "p99_ms", o.P99MS,
			"budget", o.Budget, "job", j.ID)
	}
	for _, t := range models {
		s.eng.Install(t.served, t.served.Info.Name == activate)
	}
	if activate != "" {
		if err := s.st.SetActiveModel(bg, activate); err != nil {
			return err
		}
		j.Activated = activate
		if slices.ContainsFunc(over, func(o api.OverBudget) bool { return o.Model == activate }) {
			s.log.Warn("no candidate is within the serving budget: activated the cheapest", "model", activate, "job", j.ID)
		} else {
			s.log.Info("activated the best model by validation ADG within the serving budget", "model", activate, "job", j.ID)
		}
	}
	return nil
}

// recorder keeps a job's record up to date: stages with timings, progress
// (written at most twice a second), and the final state.
type recorder struct {
	st        api.JobStore
	j         *api.Job
	log       *slog.Logger
	stageAt   time.Time
	lastWrite time.Time
	mu        sync.Mutex
	observe   func(api.Job)
	// endedElsewhere is called when the store refuses a write because the
	// job's record has ended (a shared store: another replica ended it).
	endedElsewhere func()
}

func newRecorder(st api.JobStore, j *api.Job, log *slog.Logger) *recorder {
	return &recorder{st: st, j: j, log: log}
}

func (r *recorder) start() {
	now := time.Now().UTC()
	r.j.State, r.j.StartedAt = api.JobRunning, &now
	r.stageAt = now
	r.write(true)
}

// stage closes the current stage and opens the next.
func (r *recorder) stage(name string, progress float64) {
	r.mu.Lock()
	now := time.Now()
	if r.j.Stage != "" {
		r.j.Stages = append(r.j.Stages, api.StageTiming{Name: r.j.Stage, Seconds: now.Sub(r.stageAt).Seconds()})
	}
	r.j.Stage, r.j.Progress, r.stageAt = name, progress, now
	r.mu.Unlock()
	r.write(true)
}

// skip records a model the job was asked for but did not produce.
func (r *recorder) skip(model, reason string) {
	r.mu.Lock()
	r.j.Skipped = append(r.j.Skipped, api.SkippedModel{Model: model, Reason: reason})
	r.mu.Unlock()
	r.write(true)
}

// progress moves the progress bar within a stage, named by the caller.
func (r *recorder) progress(stage string, p float64) {
	r.mu.Lock()
	if stage != "" && stage != r.j.Stage {
		r.mu.Unlock()
		r.stage(stage, p)
		return
	}
	r.j.Progress = p
	r.mu.Unlock()
	r.write(false)
}

func (r *recorder) write(force bool) {
	r.mu.Lock()
	j := *r.j
	j.Stages = slices.Clone(r.j.Stages)
	j.Skipped = slices.Clone(r.j.Skipped)
	if r.observe != nil {
		r.observe(j)
	}
	if !force && time.Since(r.lastWrite) < 500*time.Millisecond {
		r.mu.Unlock()
		return
	}
	r.lastWrite = time.Now()
	r.mu.Unlock()
	if err := r.st.PutJob(context.Background(), j); err != nil {
		if api.ErrorCode(err) == api.CodeConflict {
			r.log.Warn("the job ended elsewhere: stopping it", "job", j.ID, "err", err)
			if r.endedElsewhere != nil {
				r.endedElsewhere()
			}
			return
		}
		r.log.Error("recording job progress", "job", j.ID, "err", err)
	}
}

func (r *recorder) finish(err error, ctx context.Context, beforeWrite func()) {
	r.mu.Lock()
	now := time.Now().UTC()
	if r.j.Stage != "" {
		r.j.Stages = append(r.j.Stages, api.StageTiming{Name: r.j.Stage, Seconds: now.Sub(r.stageAt).Seconds()})
	}
	r.j.FinishedAt = &now
	switch {
	case err == nil:
		r.j.State, r.j.Progress, r.j.Stage = api.JobSucceeded, 1, ""
	case errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), errCancelled):
		r.j.State, r.j.Error = api.JobCancelled, "cancelled"
	case errors.Is(err, context.Canceled) && context.Cause(ctx) == context.Canceled:
		r.j.State, r.j.Error = api.JobFailed, interruptedByStop
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		r.j.State, r.j.Error = api.JobFailed, context.Cause(ctx).Error()
	default:
		r.j.State, r.j.Error = api.JobFailed, api.ErrorMessage(err)
		if api.ErrorCode(err) == api.CodeInternal {
			r.j.Error = err.Error()
		}
	}
	r.mu.Unlock()
	beforeWrite()
	r.write(true)
	r.log.Info("job finished", "job", r.j.ID, "kind", r.j.Kind, "state", r.j.State, "error", r.j.Error)
}
