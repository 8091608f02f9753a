package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// openOn opens a store on dsn, closed when the test ends.
func openOn(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTryLead: of two stores on one database only one leads; it keeps the
// lead on later calls, and when it closes (its session ends) the other
// takes the lead. A store on another schema elects apart.
func TestTryLead(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	a, b := openOn(t, dsn), openOn(t, dsn)
	lead := func(s *postgres.Store) bool {
		ok, err := s.TryLead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !lead(a) || lead(b) || !lead(a) || lead(b) {
		t.Fatal("want a to lead and b not, twice")
	}
	if other := openOn(t, pgtest.Schema(t)); !lead(other) {
		t.Fatal("a store on another schema does not lead its own")
	}
	a.Close()
	if !lead(b) {
		t.Fatal("b does not lead once a closed")
	}
}

// TestClaimAndCancel: queued jobs are claimed oldest first and become
// running; a claimed job cannot be cancelled as queued, a queued one can
// and is then never claimed; FailJobs fails only the states it names.
func TestClaimAndCancel(t *testing.T) {
	ctx := context.Background()
	s := openOn(t, pgtest.Schema(t))
	now := time.Now().UTC()
	if err := s.PutJob(ctx, api.Job{ID: "j0", Kind: api.JobTrain, State: api.JobQueued, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimQueuedJob(ctx); ok || err != nil {
		t.Fatalf("a store that does not lead claimed a job: %v %v", ok, err)
	}
	if _, ok, err := s.CancelQueuedJob(ctx, "j0", "x"); !ok || err != nil {
		t.Fatalf("cancelling j0 = %v %v", ok, err)
	}
	if ok, err := s.TryLead(ctx); !ok || err != nil {
		t.Fatalf("TryLead = %v %v", ok, err)
	}
	for _, id := range []string{"j1", "j2", "j3"} {
		if err := s.PutJob(ctx, api.Job{ID: id, Kind: api.JobTrain, State: api.JobQueued, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	j, ok, err := s.ClaimQueuedJob(ctx)
	if err != nil || !ok || j.ID != "j1" || j.State != api.JobRunning {
		t.Fatalf("first claim = %+v %v %v; want j1 running", j, ok, err)
	}
	if _, ok, err := s.CancelQueuedJob(ctx, "j1", "x"); ok || err != nil {
		t.Fatalf("cancelling the claimed j1 as queued = %v %v", ok, err)
	}
	if j, ok, err := s.CancelQueuedJob(ctx, "j2", "cancelled before it started"); !ok || err != nil || j.State != api.JobCancelled {
		t.Fatalf("cancelling queued j2 = %+v %v %v", j, ok, err)
	}
	pending, err := s.PendingJobs(ctx)
	if err != nil || len(pending) != 2 || pending[0].ID != "j1" || pending[1].ID != "j3" {
		t.Fatalf("pending = %+v %v; want j1, j3", pending, err)
	}
	if n, err := s.FailJobs(ctx, []string{api.JobRunning}, "interrupted"); n != 1 || err != nil {
		t.Fatalf("FailJobs(running) = %d %v; want 1", n, err)
	}
	if j, err := s.Job(ctx, "j1"); err != nil || j.State != api.JobFailed || j.Error != "interrupted" {
		t.Fatalf("j1 = %+v %v", j, err)
	}
	if j, ok, err := s.ClaimQueuedJob(ctx); err != nil || !ok || j.ID != "j3" {
		t.Fatalf("second claim = %+v %v %v; want j3 (j2 was cancelled)", j, ok, err)
	}
	if _, ok, err := s.ClaimQueuedJob(ctx); ok || err != nil {
		t.Fatalf("third claim = %v %v; want none", ok, err)
	}
}

// TestRefresh: a write through one store moves the other store's Versions
// once it refreshes; events move only the events version, an item write
// both; a refresh with nothing new moves neither.
func TestRefresh(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	a := openOn(t, dsn)
	b := openOn(t, dsn)
	refresh := func() (uint64, uint64) {
		if err := b.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		return b.Versions()
	}
	i0, e0 := refresh()
	if i, e := refresh(); i != i0 || e != e0 {
		t.Fatalf("nothing written: versions %d,%d -> %d,%d", i0, e0, i, e)
	}
	if _, err := a.AddInteractions(ctx, []api.Interaction{{UserID: "u", ItemID: "i", Type: "view"}}); err != nil {
		t.Fatal(err)
	}
	i1, e1 := refresh()
	if i1 != i0 || e1 == e0 {
		t.Fatalf("after events: versions %d,%d -> %d,%d; want only events to move", i0, e0, i1, e1)
	}
	if err := a.PutItems(ctx, []api.Item{{ID: "i2"}}); err != nil {
		t.Fatal(err)
	}
	if i2, e2 := refresh(); i2 == i1 || e2 == e1 {
		t.Fatalf("after an item write: versions %d,%d -> %d,%d; want both to move", i1, e1, i2, e2)
	}
}

// TestLostLock: a store whose lock session is ended while it leads claims
// no job (the claim runs on that session), even before it checks the lock
// again; another store then takes the lock and claims the job. The first
// store's next TryLead reports that it does not lead.
func TestLostLock(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	a := openOn(t, dsn)
	b := openOn(t, dsn)
	if ok, err := a.TryLead(ctx); !ok || err != nil {
		t.Fatalf("a TryLead = %v %v", ok, err)
	}
	pid, _ := pgtest.LeaderLock(t, dsn)
	if pid == 0 {
		t.Fatal("no session holds the leader lock while a leads")
	}
	if err := a.PutJob(ctx, api.Job{ID: "j1", Kind: api.JobTrain, State: api.JobQueued}); err != nil {
		t.Fatal(err)
	}
	pgtest.Terminate(t, dsn, pid)
	if ok, err := b.TryLead(ctx); !ok || err != nil {
		t.Fatalf("b TryLead after a's session ended = %v %v", ok, err)
	}
	if j, ok, _ := a.ClaimQueuedJob(ctx); ok {
		t.Fatalf("a claimed %+v after losing the lock to b", j)
	}
	if j, ok, err := b.ClaimQueuedJob(ctx); !ok || err != nil || j.ID != "j1" {
		t.Fatalf("b's claim = %+v %v %v; want j1", j, ok, err)
	}
	if ok, _ := a.TryLead(ctx); ok {
		t.Fatal("a still leads while b holds the lock")
	}
}

// TestPutJob_endedStaysEnded: once a job's record has ended (here failed by
// a new leader), writing it again as running, succeeded or cancelled is
// refused as a conflict and the record stays failed; a model of that job
// is not stored. A job that runs takes both writes.
func TestPutJob_endedStaysEnded(t *testing.T) {
	ctx := context.Background()
	s := openOn(t, pgtest.Schema(t))
	run := api.Job{ID: "j1", Kind: api.JobTrain, State: api.JobRunning, Stage: "fit"}
	if err := s.PutJob(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Progress = 0.5
	if err := s.PutJob(ctx, run); err != nil {
		t.Fatalf("progress of a running job: %v", err)
	}
	if err := s.PutModel(ctx, api.ModelInfo{Name: "m", Version: "v1", JobID: "j1"}, []byte("one")); err != nil {
		t.Fatalf("a model of a running job: %v", err)
	}
	if n, err := s.FailJobs(ctx, []string{api.JobRunning}, "interrupted"); n != 1 || err != nil {
		t.Fatalf("FailJobs = %d %v", n, err)
	}
	for _, st := range []string{api.JobRunning, api.JobSucceeded, api.JobCancelled} {
		j := run
		j.State = st
		if err := s.PutJob(ctx, j); api.ErrorCode(err) != api.CodeConflict || !strings.Contains(err.Error(), "already ended (failed)") {
			t.Fatalf("writing the failed job as %s: err %v; want a conflict", st, err)
		}
	}
	if j, err := s.Job(ctx, "j1"); err != nil || j.State != api.JobFailed || j.Error != "interrupted" {
		t.Fatalf("j1 = %+v %v; want failed, interrupted", j, err)
	}
	if err := s.PutModel(ctx, api.ModelInfo{Name: "m", Version: "v2", JobID: "j1"}, []byte("two")); api.ErrorCode(err) != api.CodeConflict {
		t.Fatalf("a model of the failed job: err %v; want a conflict", err)
	}
	if ms, err := s.Models(ctx); err != nil || len(ms) != 1 || ms[0].Version != "v1" {
		t.Fatalf("models = %+v %v; want v1 only", ms, err)
	}
}

// TestQueueJob_exclusive: five times, 24 training requests at once
// through two stores (two replicas) queue one job; the others are told
// which. A request that asks to queue does, and so does an evaluation.
func TestQueueJob_exclusive(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t) + "&pool_max_conns=12"
	stores := [2]*postgres.Store{openOn(t, dsn), openOn(t, dsn)}
	for round := range 5 {
		var (
			mu      sync.Mutex
			queued  []string
			pending = map[string]int{}
			wg      sync.WaitGroup
			start   = make(chan struct{})
		)
		for k := range 24 {
			wg.Go(func() {
				s := stores[k%2]
				id, err := s.NewJobID(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				<-start
				p, err := s.QueueJob(ctx, api.Job{ID: id, Kind: api.JobTrain, State: api.JobQueued}, true)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case p == nil:
					queued = append(queued, id)
				default:
					pending[p.ID]++
				}
			})
		}
		close(start)
		wg.Wait()
		if len(queued) != 1 || len(pending) != 1 || pending[queued[0]] != 23 {
			t.Fatalf("round %d: queued %v, told pending %v; want one queued and 23 told it", round, queued, pending)
		}
		if err := stores[0].PutJob(ctx, api.Job{ID: queued[0], Kind: api.JobTrain, State: api.JobSucceeded}); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range []api.Job{{ID: "x1", Kind: api.JobTrain, State: api.JobQueued}, {ID: "x2", Kind: api.JobEvaluate, State: api.JobQueued}} {
		if p, err := stores[0].QueueJob(ctx, j, false); p != nil || err != nil {
			t.Fatalf("queueing %s = %+v %v", j.ID, p, err)
		}
	}
	if ps, err := stores[1].PendingJobs(ctx); err != nil || len(ps) != 2 {
		t.Fatalf("pending = %+v %v; want x1 and x2", ps, err)
	}
}

// TestRequestCancel_marksTheRow: a cancel asked for a running job is read
// back by CancelRequested (the leader's check in case the notification is
// lost); other jobs are not marked, and a later write of the record keeps
// the mark.
func TestRequestCancel_marksTheRow(t *testing.T) {
	ctx := context.Background()
	s := openOn(t, pgtest.Schema(t))
	for _, j := range []api.Job{{ID: "j1", State: api.JobRunning}, {ID: "j2", State: api.JobRunning}, {ID: "j3", State: api.JobSucceeded}} {
		j.Kind = api.JobTrain
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"j1", "j3"} {
		if err := s.RequestCancel(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutJob(ctx, api.Job{ID: "j1", Kind: api.JobTrain, State: api.JobRunning, Progress: 0.5}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"j1": true, "j2": false, "j3": false, "j9": false} {
		if got, err := s.CancelRequested(ctx, id); got != want || err != nil {
			t.Fatalf("CancelRequested(%s) = %v %v; want %v", id, got, err, want)
		}
	}
}
