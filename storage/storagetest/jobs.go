package storagetest

import (
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// The contract on job and evaluation report records.

func testJobs(t *testing.T, open Opener) {
	now := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	s := open(t, Options{Now: func() time.Time { return now }})
	var ids []string
	states := []string{api.JobSucceeded, api.JobRunning, api.JobQueued, api.JobFailed}
	for k, st := range states {
		id, err := s.NewJobID(bg)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if err := s.PutJob(bg, api.Job{ID: id, Kind: "train", Models: []string{"knn"}, State: st, Progress: float64(k) / 4,
			CreatedAt: now.Add(time.Duration(k) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("job ids %v, want increasing", ids)
	}
	j, err := s.Job(bg, ids[1])
	if err != nil || j.State != api.JobRunning || j.Progress != 0.25 || !j.CreatedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("job = %+v, %v", j, err)
	}
	if _, err := s.Job(bg, "j999"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("missing job err = %v", err)
	}
	list, err := s.Jobs(bg, 3)
	if err != nil || len(list) != 3 || list[0].ID != ids[3] || list[2].ID != ids[1] {
		t.Fatalf("jobs = %+v, %v; want the newest three, newest first", list, err)
	}
	// A second queued job, made after the others: RecoverJobs returns the
	// queued ones oldest first.
	later, err := s.NewJobID(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(bg, api.Job{ID: later, Kind: "evaluate", Models: []string{"knn"}, State: api.JobQueued, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	queued, n, err := s.RecoverJobs(bg, "the server stopped")
	if err != nil || n != 1 || len(queued) != 2 || queued[0].ID != ids[2] || queued[1].ID != later || queued[0].State != api.JobQueued {
		t.Fatalf("RecoverJobs = %+v, %d, %v; want the running job failed and the queued %s and %s returned in order", queued, n, err, ids[2], later)
	}
	for k, id := range ids {
		j, _ := s.Job(bg, id)
		wantState := states[k]
		if k == 1 {
			wantState = api.JobFailed
			if j.Error != "the server stopped" || j.FinishedAt == nil || !j.FinishedAt.Equal(now) {
				t.Fatalf("interrupted job = %+v", j)
			}
		}
		if j.State != wantState {
			t.Fatalf("job %d state %s, want %s", k, j.State, wantState)
		}
	}
	if queued, n, _ := s.RecoverJobs(bg, "again"); n != 0 || len(queued) != 2 {
		t.Fatalf("second RecoverJobs = %d failed, %d queued; want 0 and the same 2", n, len(queued))
	}
}

func testReports(t *testing.T, open Opener) {
	now := time.Date(2026, 2, 3, 4, 5, 6, 789123456, time.UTC)
	s := open(t, Options{Now: func() time.Time { return now }})
	if list, err := s.Reports(bg); err != nil || len(list) != 0 {
		t.Fatalf("no reports = %v, %v", list, err)
	}
	a := &api.Report{Protocol: "holdout"}
	if err := s.PutReport(bg, a); err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || !a.CreatedAt.Equal(now.Truncate(time.Millisecond)) {
		t.Fatalf("report = %+v, want an id and the time to the millisecond", a)
	}
	b := &api.Report{Protocol: "kfold"}
	if err := s.PutReport(bg, b); err != nil {
		t.Fatal(err)
	}
	if b.ID <= a.ID {
		t.Fatalf("ids %q then %q, want increasing", a.ID, b.ID)
	}
	got, err := s.Report(bg, a.ID)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("report = %+v, %v; want %+v", got, err, a)
	}
	list, err := s.Reports(bg)
	if err != nil || len(list) != 2 || list[0].ID != b.ID {
		t.Fatalf("reports = %v, %v; want newest first", list, err)
	}
	if _, err := s.Report(bg, "r0"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("missing report err = %v", err)
	}
}
