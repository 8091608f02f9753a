package jobs

import (
	"context"
	"errors"

	"github.com/recsys-engine/recsys/api"
)

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

// interruptedByLeader is the error of a job whose leader was lost.
const interruptedByLeader = "interrupted: the replica running it stopped (the training leader was lost)"

// errLostLead cancels the job of a replica that lost the leader lock.
var errLostLead = errors.New("interrupted: this replica lost the training leader lock, so another may run the jobs now")

// errEndedElsewhere cancels a job whose record another replica ended: a
// new leader marked it failed after this one lost the lock.
var errEndedElsewhere = errors.New("the job's record was ended by another replica")

// Leading reports whether this process runs the jobs: always without a
// shared queue, only while it holds the leader lock with one (never with
// Options.NeverLead, which does not try to take it).
func (s *Scheduler) Leading() bool { return s.shared == nil || s.leading.Load() }

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
