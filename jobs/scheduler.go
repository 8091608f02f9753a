// Package jobs runs the background work of recsys on store snapshots:
// training and evaluation jobs, their triggers and their records. A
// training job fits every kind of model the same way (kinds.go), persists
// it, and hands it to the serving engine (package recsys/serving), which
// answers from it.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"recsys/api"
	"recsys/recsys"
	"recsys/recsys/eval"
	"recsys/recsys/serving"
)

// Store is what the scheduler reads and writes.
type Store interface {
	Snapshot(ctx context.Context) (*api.Snapshot, error)
	Counts(ctx context.Context) (api.Counts, error)
	NewModelVersion(ctx context.Context) (string, error)
	api.ModelStore
	api.JobStore
	api.ReportStore
}

// Shared is a store that several serve processes (replicas) share, the
// PostgreSQL store: its jobs table is the queue every replica submits to,
// and one replica at a time, the leader, holds its lock and runs the jobs
// and the triggers (docs/design.md#replicas).
type Shared interface {
	// TryLead takes or keeps the leader lock; true while it is held.
	TryLead(ctx context.Context) (bool, error)
	PendingJobs(ctx context.Context) ([]api.Job, error)
	ClaimQueuedJob(ctx context.Context) (api.Job, bool, error)
	CancelQueuedJob(ctx context.Context, id, reason string) (api.Job, bool, error)
	FailJobs(ctx context.Context, states []string, reason string) (int, error)
	// QueueJob stores queued job j. With exclusive set, it does so only if
	// no training job is queued or running, atomically across replicas,
	// and otherwise returns that job (pending) and stores nothing.
	QueueJob(ctx context.Context, j api.Job, exclusive bool) (pending *api.Job, err error)
	// RequestCancel asks the replica running job id to cancel it
	// (CancelRunning there, at once by a notification) and records the
	// request, which the leader also reads with CancelRequested.
	RequestCancel(ctx context.Context, id string) error
	// CancelRequested reports whether RequestCancel was called for job
	// id: the leader's check in case the notification was lost.
	CancelRequested(ctx context.Context, id string) (bool, error)
	// AnnounceQueued tells the leader a job is queued (Wake there).
	AnnounceQueued(ctx context.Context, id string) error
}

// Serving is where finished models go: the serving engine
// (serving.Engine), as the scheduler uses it.
type Serving interface {
	Install(m *serving.Served, activate bool)
	Activate(name string) error
	Active() *serving.Served
	Lookup(name string) *serving.Served
	// Loading reports a persisted model the start has not loaded yet.
	Loading(name string) bool
}

// Options configure the scheduler's triggers (docs/design.md#jobs).
type Options struct {
	// Interval retrains on a schedule; 0 turns the schedule off.
	Interval time.Duration
	// NewEvents retrains once this many events arrived since the last
	// training (or since start with no model); 0 turns it off.
	NewEvents int64
	// CheckEvery is how often the event trigger is checked.
	CheckEvery time.Duration
	// Models are trained by triggers and by requests that name none.
	Models []string
	// Auto makes the triggers' jobs auto-mode jobs (api.TrainRequest):
	// the model with the best validation ADG becomes the default.
	Auto   bool
	Train  TrainOptions
	Logger *slog.Logger
	// Replicated makes the queue the store's, when it is Shared: jobs
	// submitted at any replica run at the elected leader. Without it (the
	// CLI, a bbolt file) the process is its only runner.
	Replicated bool
	// LeadEvery is how often a replica tries to become the leader, and the
	// leader checks its lock and polls the queue (default 2 s).
	LeadEvery time.Duration
	// OnProgress, when set, sees every update of a job's record (the CLI
	// draws its progress bar from it).
	OnProgress func(api.Job)
}

// Defaults of Options (documented in the README).
const (
	DefaultInterval   = 24 * time.Hour
	DefaultNewEvents  = 10000
	DefaultCheckEvery = 10 * time.Second
	DefaultLeadEvery  = 2 * time.Second
)

// interruptedByLeader is the error of a job whose leader was lost.
const interruptedByLeader = "interrupted: the replica running it stopped (the training leader was lost)"

// errLostLead cancels the job of a replica that lost the leader lock.
var errLostLead = errors.New("interrupted: this replica lost the training leader lock, so another may run the jobs now")

// errCancelled cancels a job that was asked to stop (Cancel, here or at
// another replica); a job cancelled without a cause, when the scheduler's
// context ends, was stopped by its process shutting down.
var errCancelled = errors.New("cancelled")

// errEndedElsewhere cancels a job whose record another replica ended: a
// new leader marked it failed after this one lost the lock.
var errEndedElsewhere = errors.New("the job's record was ended by another replica")

// Scheduler runs training and evaluation jobs one at a time, in order, on
// a background goroutine, and keeps their records.
type Scheduler struct {
	st   Store
	eng  Serving
	opts Options
	log  *slog.Logger

	mu          sync.Mutex
	queue       []api.Job
	running     *api.Job
	cancelRun   context.CancelCauseFunc
	wake        chan struct{}
	lastTrained int64 // event counter at the last training's snapshot

	// shared is the store's queue when Options.Replicated; nil otherwise.
	shared  Shared
	leading atomic.Bool
}

// NewScheduler returns a scheduler; Run starts it.
func NewScheduler(st Store, eng Serving, opts Options) *Scheduler {
	if len(opts.Models) == 0 {
		opts.Models = DefaultModels
	}
	if len(opts.Train.Grid) == 0 {
		opts.Train = DefaultTrainOptions
	}
	if opts.CheckEvery == 0 {
		opts.CheckEvery = DefaultCheckEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// A name listed twice would be trained twice by every default job,
	// evicting the previous good version (only two are kept).
	opts.Models = distinct(opts.Models)
	if opts.LeadEvery == 0 {
		opts.LeadEvery = DefaultLeadEvery
	}
	s := &Scheduler{st: st, eng: eng, opts: opts, log: opts.Logger, wake: make(chan struct{}, 1), lastTrained: -1}
	if sh, ok := st.(Shared); ok && opts.Replicated {
		s.shared = sh
	}
	return s
}

// Leading reports whether this process runs the jobs: always without a
// shared queue, only while it holds the leader lock with one.
func (s *Scheduler) Leading() bool { return s.shared == nil || s.leading.Load() }

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
// An auto job that names no models fits AutoModels, the candidates of its
// choice, and beside them the server's models that are not recommenders
// (the content metric), which no choice concerns.
func (s *Scheduler) SubmitTrain(ctx context.Context, req api.TrainRequest) (api.Job, error) {
	models := req.Models
	if len(models) == 0 {
		models = s.opts.Models
		if req.Auto {
			models = slices.Clone(AutoModels)
			for _, n := range s.opts.Models {
				if !Recommender(n) && !slices.Contains(models, n) {
					models = append(models, n)
				}
			}
		}
	}
	if err := checkModelNames(models, TrainableNames(), "trained"); err != nil {
		return api.Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(ctx, api.Job{Kind: api.JobTrain, Models: slices.Clone(models), Trigger: req.Trigger, Auto: req.Auto}, !req.Queue)
}

// trainConflict is the 409 of a training request while job id is.
func trainConflict(id, state string) error {
	return &api.Error{Code: api.CodeConflict,
		Message: fmt.Sprintf("training job %s is already %s; retry later or ask to queue", id, state),
		Details: []api.ErrorDetail{{Field: "job_id", Problem: id}}}
}

// SubmitEvaluation queues an offline evaluation of the stored data. Only
// recommenders can be evaluated (the protocol ranks items for users); a
// request that names none evaluates the recommenders among the server's
// models.
func (s *Scheduler) SubmitEvaluation(ctx context.Context, req api.EvaluationRequest) (api.Job, error) {
	if len(req.Models) == 0 {
		req.Models = slices.DeleteFunc(slices.Clone(s.opts.Models), func(n string) bool { return !Recommender(n) })
		if len(req.Models) == 0 {
			return api.Job{}, api.FieldError("models", fmt.Sprintf("the server's models (%s) include no recommender to evaluate; name some of: %s",
				strings.Join(s.opts.Models, ", "), strings.Join(recsys.Names(), ", ")))
		}
	}
	if err := checkModelNames(req.Models, recsys.Names(), "evaluated"); err != nil {
		return api.Job{}, err
	}
	if req.Protocol == "" {
		req.Protocol = eval.Standard
	}
	if req.Folds == 0 {
		req.Folds = 3
		if req.Protocol == eval.Time {
			req.Folds = 1
		}
	}
	if m := eval.MaxFolds(req.Protocol); m > 0 && req.Folds > m {
		return api.Job{}, api.FieldError("folds", fmt.Sprintf("the %s protocol has at most %d folds, not %d", req.Protocol, m, req.Folds))
	}
	if req.Seed == 0 {
		req.Seed = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(ctx, api.Job{Kind: api.JobEvaluate, Models: req.Models, Trigger: "api",
		Protocol: req.Protocol, Folds: req.Folds, Seed: req.Seed}, false)
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

// Run processes jobs and fires the triggers until ctx is done; it then
// cancels the running job and waits for it to stop.
func (s *Scheduler) Run(ctx context.Context) {
	var tick <-chan time.Time
	if s.opts.Interval > 0 {
		t := time.NewTicker(s.opts.Interval)
		defer t.Stop()
		tick = t.C
	}
	check := time.NewTicker(s.opts.CheckEvery)
	defer check.Stop()
	if s.shared != nil {
		// The lock is checked apart from the loop, which a job blocks, so
		// that a leader that loses it stops its job (lead).
		s.lead(ctx)
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			t := time.NewTicker(s.opts.LeadEvery)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					s.lead(ctx)
					s.Wake() // and poll the queue
				}
			}
		}()
	}
	s.checkEvents(ctx)
	for {
		s.drain(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-tick:
			s.trigger(ctx, "interval")
		case <-check.C:
			s.checkEvents(ctx)
		}
	}
}

// lead takes or keeps the leader lock of a shared queue. A replica that
// becomes the leader fails the jobs its lost predecessor left running (no
// other process runs jobs while it holds the lock) and counts the events
// up to now as trained on, as a start with a loaded model does.
func (s *Scheduler) lead(ctx context.Context) {
	ok, err := s.shared.TryLead(ctx)
	if err != nil {
		s.log.Warn("checking the training leader lock", "err", err)
	}
	was := s.leading.Swap(ok)
	switch {
	case ok && !was:
		s.log.Info("became the training leader: this replica runs the jobs and the triggers")
		n, err := s.shared.FailJobs(ctx, []string{api.JobRunning}, interruptedByLeader)
		if err != nil {
			s.log.Error("failing the jobs of the lost leader", "err", err)
		} else if n > 0 {
			s.log.Warn("marked the lost leader's jobs failed", "jobs", n)
		}
		if s.eng.Active() != nil {
			if c, err := s.st.Counts(ctx); err == nil {
				s.mu.Lock()
				s.lastTrained = c.Events
				s.mu.Unlock()
			}
		}
	case !ok && was:
		// Another replica may lead now and fail the running job: stop it,
		// recorded as interrupted (if the new leader has not already).
		s.log.Warn("lost the training leader lock: another replica runs the jobs now")
		s.mu.Lock()
		if s.running != nil {
			s.cancelRun(errLostLead)
		}
		s.mu.Unlock()
	case ok:
		// A cancel asked at another replica comes by a notification,
		// which is lost if it was sent while this replica's LISTEN
		// connection was down: the request is also in the job's row.
		s.mu.Lock()
		id := ""
		if s.running != nil {
			id = s.running.ID
		}
		s.mu.Unlock()
		if id == "" {
			return
		}
		if yes, err := s.shared.CancelRequested(ctx, id); err != nil {
			s.log.Warn("reading whether the running job was cancelled", "job", id, "err", err)
		} else if yes && s.CancelRunning(id) {
			s.log.Info("cancelled the running job as asked at another replica (read from its row)", "job", id)
		}
	}
}

// checkEvents fires the "N new events" trigger.
func (s *Scheduler) checkEvents(ctx context.Context) {
	if s.opts.NewEvents <= 0 || !s.Leading() {
		return
	}
	c, err := s.st.Counts(ctx)
	if err != nil {
		return
	}
	s.mu.Lock()
	since := c.Events - max(s.lastTrained, 0)
	s.mu.Unlock()
	if since >= s.opts.NewEvents && c.Positives > 0 {
		s.trigger(ctx, "interactions")
	}
}

func (s *Scheduler) trigger(ctx context.Context, why string) {
	if !s.Leading() {
		return
	}
	if _, err := s.SubmitTrain(ctx, api.TrainRequest{Trigger: why, Auto: s.opts.Auto}); err != nil && api.ErrorCode(err) != api.CodeConflict {
		s.log.Error("scheduling a retrain", "trigger", why, "err", err)
	}
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

// checkModelNames rejects, naming the entry, a name that is not in valid
// (the registry's names for what the job does: "trained", "evaluated")
// and a name given twice, which would fit the model twice and evict its
// previous good version.
func checkModelNames(names, valid []string, done string) error {
	for k, n := range names {
		field := fmt.Sprintf("models[%d]", k)
		if !slices.Contains(valid, n) {
			what := fmt.Sprintf("unknown model %q", n)
			if Trainable(n) {
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

// ModelNames lists the model names the scheduler's requests accept.
func (s *Scheduler) ModelNames() api.ModelNames {
	return api.ModelNames{Trainable: TrainableNames(), Recommenders: recsys.Names(), Defaults: slices.Clone(s.opts.Models)}
}

// Activate makes a served model the default and records it, so a restart
// serves it too.
func (s *Scheduler) Activate(ctx context.Context, name string) error {
	if !Recommender(name) {
		if Trainable(name) {
			return api.Errorf(api.CodeNotFound, "%q is not a recommender and cannot answer recommendations", name)
		}
		return api.Errorf(api.CodeNotFound, "unknown model %q", name)
	}
	loading := s.eng.Loading(name) // before Lookup: a load ends by serving the model
	if s.eng.Lookup(name) == nil {
		if loading { // not eng.Activate: the load may end meanwhile, and the choice go unrecorded
			return api.ModelLoading(name)
		}
		return api.Errorf(api.CodeNotFound, "model %q is not trained yet", name)
	}
	if err := s.st.SetActiveModel(ctx, name); err != nil {
		return err
	}
	return s.eng.Activate(name)
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
	// Persist every model first, then swap: a crash in between leaves the
	// new versions on disk and a restart serves them.
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
		if err := s.st.PutModel(bg, t.served.Info, t.blob); err != nil {
			return err
		}
		j.Versions = append(j.Versions, t.served.Info.Name+"@"+v)
		if in := t.served.Info; len(in.GridExtended) > 0 || len(in.GridEdge) > 0 {
			j.Grid = append(j.Grid, api.GridNote{Model: in.Name, Extended: in.GridExtended, Edge: in.GridEdge})
		}
	}
	activate, err := s.chooseActive(bg, models, j.Auto)
	if err != nil {
		return err
	}
	for _, t := range models {
		s.eng.Install(t.served, t.served.Info.Name == activate)
	}
	if activate != "" {
		if err := s.st.SetActiveModel(bg, activate); err != nil {
			return err
		}
		j.Activated = activate
		s.log.Info("activated the best model by validation ADG", "model", activate, "job", j.ID)
	}
	s.mu.Lock()
	s.lastTrained = snap.Events
	s.mu.Unlock()
	return nil
}

// chooseActive picks the trained recommender with the best validation ADG
// (dissertation §4.7.3's selection rule) when the job is an auto job or no
// model is active; otherwise it keeps the active model (""). Whether one
// is active is the store's record, served here: what the engine serves by
// default can be a model installed before any was chosen (a start's
// first recommender loaded), which must not stop the first training from
// choosing.
func (s *Scheduler) chooseActive(ctx context.Context, models []trained, auto bool) (string, error) {
	if !auto {
		cur, err := s.st.ActiveModel(ctx)
		if err != nil {
			return "", err
		}
		if cur != "" && s.eng.Lookup(cur) != nil {
			return "", nil
		}
	}
	var names []string
	var adg []float64
	for _, t := range models {
		if Recommender(t.served.Info.Name) {
			names = append(names, t.served.Info.Name)
			adg = append(adg, t.served.Info.Validation["adg"])
		}
	}
	if k := eval.AutoChoice(adg); k >= 0 {
		return names[k], nil
	}
	return "", nil
}

func (s *Scheduler) runEvaluation(ctx context.Context, j *api.Job, rec *recorder) error {
	rec.stage("snapshot", 0)
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return err
	}
	if len(snap.Users) == 0 {
		return api.Errorf(api.CodeConflict, "there are no relevant interactions to evaluate on")
	}
	d := &eval.Dataset{Name: "stored data", UserIDs: snap.UserIDs, ItemIDs: snap.ItemIDs, Users: snap.Users, Items: snap.Items}
	if j.Protocol == eval.Time {
		rec.stage("event times", 0.02)
		if d.Times, err = pairTimes(ctx, s.st, snap); err != nil {
			return err
		}
	}
	rec.stage("evaluate", 0.05)
	report, err := eval.Run(ctx, d, eval.Options{Models: j.Models, Folds: j.Folds, Protocol: j.Protocol, Seed: j.Seed,
		Progress: func(stage string, done, total int) {
			if total > 0 {
				rec.progress(stage, 0.05+0.9*float64(done)/float64(total))
			}
		}})
	if err != nil {
		return err
	}
	report.Kind = "recommendation"
	rec.stage("store report", 0.95)
	if err := s.st.PutReport(context.WithoutCancel(ctx), report); err != nil {
		return err
	}
	j.ReportID = report.ID
	return nil
}

// historyReader is the part of a store the time protocol reads the event
// times from: a snapshot carries the positive pairs without them.
type historyReader interface {
	History(ctx context.Context, userID string, p api.Page) ([]api.HistoryEntry, string, error)
}

// pairTimes is, for every positive pair of snap, the Unix time of its first
// event (api.HistoryEntry.FirstSeen), read from each user's history.
func pairTimes(ctx context.Context, st Store, snap *api.Snapshot) ([]int64, error) {
	h, ok := st.(historyReader)
	if !ok {
		return nil, api.Errorf(api.CodeConflict, "the store keeps no event times for the time protocol")
	}
	byUser := map[uint32][]int{}
	for k, u := range snap.Users {
		byUser[u] = append(byUser[u], k)
	}
	times := make([]int64, len(snap.Users))
	for u, pairs := range byUser {
		first := map[string]time.Time{}
		for cursor := ""; ; {
			entries, next, err := h.History(ctx, snap.UserIDs[u], api.Page{Cursor: cursor, Limit: 1000})
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				first[e.ItemID] = e.FirstSeen
			}
			if next == "" {
				break
			}
			cursor = next
		}
		for _, k := range pairs {
			item := snap.ItemIDs[snap.Items[k]]
			at, ok := first[item]
			if !ok || at.IsZero() {
				return nil, api.Errorf(api.CodeConflict, "no event time for user %q and item %q (the data changed during the evaluation?)", snap.UserIDs[u], item)
			}
			times[k] = at.Unix()
		}
	}
	return times, nil
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
