package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// errCancelled cancels a job that was asked to stop (Cancel, here or at
// another replica); a job cancelled without a cause, when the scheduler's
// context ends, was stopped by its process shutting down.
var errCancelled = errors.New("cancelled")

// interruptedByStop is the error of a job that was running when its
// process stopped: cancelled by a graceful shutdown, or found running at
// the next start after a crash.
const interruptedByStop = "interrupted: the process stopped while the job was running"

// Recover marks jobs left running by a stopped process as failed and queues
// again, in their order, the jobs it left queued, which never started. Call
// it once at start-up, before Run.
func (s *Scheduler) Recover(ctx context.Context) error {
	var n int
	var err error
	if _, shared := s.st.(Shared); !shared {
		// A shared store's running jobs may be another replica's: the
		// leader that takes over fails them instead (lead), and its queued
		// jobs stay in the store's queue.
		var queued []api.Job
		queued, n, err = s.st.RecoverJobs(ctx, interruptedByStop)
		s.mu.Lock()
		s.queue = append(queued, s.queue...)
		s.mu.Unlock()
		if len(queued) > 0 {
			s.log.Info("queued again the jobs the last process left queued", "jobs", len(queued))
		}
	}
	if n > 0 {
		s.log.Warn("marked interrupted jobs failed", "jobs", n)
	}
	if err == nil && s.eng.Active() != nil {
		// A loaded model counts as trained at start: only new events
		// from now on trigger retraining.
		if c, err2 := s.st.Counts(ctx); err2 == nil {
			s.lastTrained = c.Events
		}
	}
	return err
}

// SubmitTrain queues a training job. With a training job already queued or
// running, it answers a conflict naming that job unless req.Queue is set.
// An auto job that names no models fits the server's models and the auto
// candidates they lack (AutoJobModels), which it records as its additions.
func (s *Scheduler) SubmitTrain(ctx context.Context, req api.TrainRequest) (api.Job, error) {
	models := req.Models
	var added []string
	if len(models) == 0 {
		models = s.opts.Models
		if req.Auto {
			models, added = AutoJobModels(s.opts.Models)
		}
	}
	if err := checkModelNames(models, recsys.Kinds(), "trained"); err != nil {
		return api.Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(ctx, api.Job{Kind: api.JobTrain, Models: slices.Clone(models), Trigger: req.Trigger, Auto: req.Auto, Additions: added}, !req.Queue)
}

// trainConflict is the 409 of a training request while job id is.
func trainConflict(id, state string) error {
	return &api.Error{Code: api.CodeConflict,
		Message: fmt.Sprintf("training job %s is already %s; retry later or ask to queue", id, state),
		Details: []api.ErrorDetail{{Field: "job_id", Problem: id}}}
}

// checkModelNames rejects, naming the entry, a name that is not in valid
// (the registry's names for what the job does: "trained", "evaluated")
// and a name given twice, which would fit the model twice and evict its
// previous good version.
func checkModelNames(names, valid []string, done string) error {
	for k, n := range names {
		field := fmt.Sprintf("models[%d]", k)
		if !slices.Contains(valid, n) {
			what := fmt.Sprintf("unknown model %q", n)
			if recsys.Known(n) {
				what = fmt.Sprintf("%q is not a recommender", n)
			}
			return api.FieldError(field, fmt.Sprintf("%s; models that can be %s: %s", what, done, strings.Join(valid, ", ")))
		}
		if first := slices.Index(names[:k], n); first >= 0 {
			return api.FieldError(field, fmt.Sprintf("repeats models[%d] (%q); name each model once", first, n))
		}
	}
	return nil
}

// pendingTrainLocked names the training job of this process's queue that
// is running or queued, if any, and its state. The running job's record
// belongs to its recorder, which changes its state under its own lock, so
// only the fields fixed before it started (kind, id) are read here: while
// s.running is set, the job is running.
func (s *Scheduler) pendingTrainLocked() (id, state string) {
	if s.running != nil && s.running.Kind == api.JobTrain {
		return s.running.ID, api.JobRunning
	}
	for k := range s.queue {
		if s.queue[k].Kind == api.JobTrain {
			return s.queue[k].ID, api.JobQueued
		}
	}
	return "", ""
}

// enqueueLocked queues j; exclusive refuses it (409) while a training job
// is queued or running. With a shared queue the store checks and inserts
// in one step, so that two replicas asked at once cannot both queue.
func (s *Scheduler) enqueueLocked(ctx context.Context, j api.Job, exclusive bool) (api.Job, error) {
	if exclusive && s.shared == nil {
		if id, state := s.pendingTrainLocked(); id != "" {
			return api.Job{}, trainConflict(id, state)
		}
	}
	id, err := s.st.NewJobID(ctx)
	if err != nil {
		return api.Job{}, err
	}
	j.ID, j.State, j.CreatedAt, j.Stages = id, api.JobQueued, time.Now().UTC(), []api.StageTiming{}
	if s.shared == nil {
		if err := s.st.PutJob(ctx, j); err != nil {
			return api.Job{}, err
		}
		s.queue = append(s.queue, j)
	} else {
		pending, err := s.shared.QueueJob(ctx, j, exclusive)
		if err != nil {
			return api.Job{}, err
		}
		if pending != nil {
			return api.Job{}, trainConflict(pending.ID, pending.State)
		}
		if !s.leading.Load() {
			// The leader polls the queue every LeadEvery anyway.
			if err := s.shared.AnnounceQueued(ctx, j.ID); err != nil {
				s.log.Warn("announcing a queued job to the leader", "job", j.ID, "err", err)
			}
		}
	}
	s.Wake()
	return j, nil
}

// Wake makes the scheduler look at its queue now: after a submit, or at
// the leader when another replica announces a queued job.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Cancel stops a running job or drops a queued one.
func (s *Scheduler) Cancel(ctx context.Context, id string) (api.Job, error) {
	s.mu.Lock()
	if s.running != nil && s.running.ID == id {
		s.cancelRun(errCancelled)
		s.mu.Unlock()
		return s.st.Job(ctx, id)
	}
	for k, j := range s.queue {
		if j.ID == id {
			s.queue = slices.Delete(s.queue, k, k+1)
			s.mu.Unlock()
			now := time.Now().UTC()
			j.State, j.FinishedAt, j.Error = api.JobCancelled, &now, "cancelled before it started"
			return j, s.st.PutJob(ctx, j)
		}
	}
	s.mu.Unlock()
	if s.shared != nil {
		if j, ok, err := s.shared.CancelQueuedJob(ctx, id, "cancelled before it started"); ok || err != nil {
			return j, err
		}
	}
	j, err := s.st.Job(ctx, id)
	if err != nil {
		return j, err
	}
	if j.State == api.JobRunning && s.shared != nil {
		// It runs at another replica, the leader: ask it to stop.
		return j, s.shared.RequestCancel(ctx, id)
	}
	return j, &api.Error{Code: api.CodeConflict, Message: fmt.Sprintf("job %s already ended (%s)", id, j.State)}
}

// CancelRunning cancels job id if this process runs it, and reports
// whether it did: the leader's answer to another replica's RequestCancel.
func (s *Scheduler) CancelRunning(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil || s.running.ID != id {
		return false
	}
	s.cancelRun(errCancelled)
	return true
}

// RunQueued runs the queued jobs in the calling goroutine and returns when
// the queue is empty: the CLI's way to run one job without the loop.
func (s *Scheduler) RunQueued(ctx context.Context) { s.drain(ctx) }

// drain runs queued jobs until the queue is empty or ctx is done.
func (s *Scheduler) drain(ctx context.Context) {
	for ctx.Err() == nil {
		jctx, cancel := context.WithCancelCause(ctx)
		j := s.next(ctx, cancel)
		if j == nil {
			cancel(nil)
			return
		}
		s.execute(jctx, j, cancel)
		cancel(nil)
	}
}

// next takes the next job to run, from the process's queue or, at the
// leader of a shared queue, the store's oldest queued job, and marks it
// running here with cancel as its cancel; nil when there is none. A local
// job leaves the queue and becomes running under one lock, so a submit
// never sees it in neither place.
func (s *Scheduler) next(ctx context.Context, cancel context.CancelCauseFunc) *api.Job {
	var j api.Job
	if s.shared != nil {
		if !s.leading.Load() {
			return nil
		}
		var ok bool
		var err error
		if j, ok, err = s.shared.ClaimQueuedJob(ctx); !ok {
			if err != nil {
				s.log.Error("taking a queued job", "err", err)
			}
			return nil
		}
		s.mu.Lock()
	} else {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return nil
		}
		j = s.queue[0]
		s.queue = s.queue[1:]
	}
	s.running, s.cancelRun = &j, cancel
	s.mu.Unlock()
	return &j
}

// execute runs one job and records its outcome. Record writes use a
// context that outlives the job's, so a cancelled job is still recorded.
// A record write refused because another replica ended the job (the new
// leader after this one lost the lock) stops it with cancel.
func (s *Scheduler) execute(ctx context.Context, j *api.Job, cancel context.CancelCauseFunc) {
	rec := newRecorder(s.st, j, s.log)
	rec.endedElsewhere = func() { cancel(errEndedElsewhere) }
	rec.observe = s.opts.OnProgress
	rec.start()
	var err error
	switch j.Kind {
	case api.JobTrain:
		err = s.runTrain(ctx, j, rec)
	case api.JobEvaluate:
		err = s.runEvaluation(ctx, j, rec)
	default:
		err = fmt.Errorf("unknown job kind %q", j.Kind)
	}
	// The job stops being "running" before its final record is written,
	// so a cancel that reads the ended record is answered as ended.
	rec.finish(err, ctx, func() {
		s.mu.Lock()
		s.running, s.cancelRun = nil, nil
		s.mu.Unlock()
	})
}
