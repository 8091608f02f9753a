// Package jobs runs the background work of recsys on store snapshots:
// training and evaluation jobs, their triggers and their records. A
// training job fits every kind of model the same way (train.go), persists
// it, and hands it to the serving engine (package recsys/serving), which
// answers from it.
//
// A Scheduler (scheduler.go) runs the jobs of its queue one at a time
// (queue.go); with replicas the queue is the shared store's, and only the
// elected leader runs it (leader.go). Each job keeps its record up to date,
// and a training job stores its models and chooses the active one
// (records.go); evaluation jobs write a report (evaluate.go).
//
// Works cited in the comments are listed in docs/references.md.
package jobs

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/serving"
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
	// Auto makes the triggers' jobs, the first training among them,
	// auto-mode jobs (api.TrainRequest): they fit Models and the auto
	// candidates Models lack (AutoJobModels), and the model with the best
	// validation ADG within Budget becomes the default. serve sets it by
	// default (--auto).
	Auto bool
	// Budget bounds the serving cost of the model a training job
	// activates (api.ServeBudget; zero: no bound): chooseActive passes
	// over the candidates above it.
	Budget api.ServeBudget
	Train  TrainOptions
	Logger *slog.Logger
	// Replicated makes the queue the store's, when it is Shared: jobs
	// submitted at any replica run at the elected leader. Without it (the
	// CLI, a bbolt file) the process is its only runner.
	Replicated bool
	// NeverLead keeps a replica out of the election of a shared queue: it
	// never takes the leader lock, so it runs no job and fires no
	// trigger, and only queues jobs for the leader (serve --role serve).
	// Without a shared queue it has no effect.
	NeverLead bool
	// LeadEvery is how often a replica tries to become the leader, and the
	// leader checks its lock and polls the queue (default 2 s).
	LeadEvery time.Duration
	// OnProgress, when set, sees every update of a job's record (the CLI
	// draws its progress bar from it).
	OnProgress func(api.Job)
}

// Defaults of Options (documented in docs/configuration.md).
const (
	DefaultInterval   = 24 * time.Hour
	DefaultNewEvents  = 10000
	DefaultCheckEvery = 10 * time.Second
	DefaultLeadEvery  = 2 * time.Second
)

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
		// The grids default; the server's content threshold stays.
		above := opts.Train.ContentApproxAbove
		opts.Train = DefaultTrainOptions
		opts.Train.ContentApproxAbove = above
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
	if s.shared != nil && !s.opts.NeverLead {
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

// trigger queues a training job for the reason why, at the leader only;
// a training job already queued or running makes it a no-op.
func (s *Scheduler) trigger(ctx context.Context, why string) {
	if !s.Leading() {
		return
	}
	if _, err := s.SubmitTrain(ctx, api.TrainRequest{Trigger: why, Auto: s.opts.Auto}); err != nil && api.ErrorCode(err) != api.CodeConflict {
		s.log.Error("scheduling a retrain", "trigger", why, "err", err)
	}
}

// ModelNames lists the model names the scheduler's requests accept.
func (s *Scheduler) ModelNames() api.ModelNames {
	return api.ModelNames{Trainable: recsys.Kinds(), Recommenders: recsys.Names(), Defaults: slices.Clone(s.opts.Models)}
}
