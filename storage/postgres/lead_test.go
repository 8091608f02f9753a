package postgres_test

import (
	"context"
	"testing"
	"time"

	"recsys/api"
	"recsys/storage/postgres"
	"recsys/storage/postgres/pgtest"
)

// TestTryLead: of two stores on one database only one leads; it keeps the
// lead on later calls, and when it closes (its session ends) the other
// takes the lead. A store on another schema elects apart.
func TestTryLead(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	openOn := func(dsn string) *postgres.Store {
		s, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := openOn(dsn), openOn(dsn)
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
	if other := openOn(pgtest.Schema(t)); !lead(other) {
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
	s, err := postgres.Open(ctx, pgtest.Schema(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
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
	a, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
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
