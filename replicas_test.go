package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// replica is a `recsys serve` process on a shared database.
type replica struct {
	*testApp
	kill func()
	pid  int
}

func startReplica(t *testing.T, dsn string, extra ...string) replica {
	t.Helper()
	cmd, url := startBinary(t, dsn, append([]string{"--retrain-after", "0", "--retrain-interval", "0", "--allow-fallback"}, extra...)...)
	t.Cleanup(func() {
		if t.Failed() {
			_ = cmd.Process.Signal(syscall.SIGQUIT)
			time.Sleep(500 * time.Millisecond)
			t.Logf("log of %s:\n%s", url, cmd.Stderr)
		}
	})
	return replica{testApp: &testApp{URL: url}, kill: func() { _ = cmd.Process.Kill() }, pid: cmd.Process.Pid}
}

// postViews posts, in batches of 5,000, views of users u0..u(users-1),
// each of up to perUser of the items i0..i(items-1) (four in five), and
// returns how many.
func postViews(t *testing.T, r replica, users, perUser, items int) int {
	t.Helper()
	var evs []map[string]any
	for u := range users {
		for i := range perUser {
			if (u*7+i*3)%5 != 0 {
				evs = append(evs, map[string]any{"user_id": fmt.Sprintf("u%d", u), "item_id": fmt.Sprintf("i%d", (u/10+i)%items), "type": "view"})
			}
		}
	}
	for k := 0; k < len(evs); k += 5000 {
		if st := r.postJSON(t, "/interactions", map[string]any{"interactions": evs[k:min(k+5000, len(evs))]}, nil); st != http.StatusCreated {
			t.Fatalf("POST /interactions at %s = %d", r.URL, st)
		}
	}
	return len(evs)
}

// leading reads the replica's recsys_training_leader gauge.
func (r replica) leading(t *testing.T) bool {
	t.Helper()
	status, body := r.do(t, http.MethodGet, "/metrics", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics = %d", status)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "recsys_training_leader "); ok {
			return v == "1"
		}
	}
	t.Fatalf("no recsys_training_leader in /metrics")
	return false
}

// within polls cond every 20 ms for up to d and reports how long it took;
// it fails the test when cond never held.
func within(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// throughout runs check every 20 ms for d, until and including a run at d
// or later, and fails the test at the first run that reports a violation
// (a non-empty description): a check that something does not happen, for
// as long as it could have, that ends early when it does.
func throughout(t *testing.T, d time.Duration, check func() string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if bad := check(); bad != "" {
			t.Fatalf("after %v: %s", time.Since(start).Round(time.Millisecond), bad)
		}
		if time.Since(start) >= d {
			return
		}
	}
}

func (r replica) recs(t *testing.T, user, model string) api.RecommendationsOut {
	t.Helper()
	var out api.RecommendationsOut
	path := "/users/" + user + "/recommendations?n=10"
	if model != "" {
		path += "&model=" + model
	}
	if st := r.getJSON(t, path, &out); st != http.StatusOK {
		t.Fatalf("%s %s = %d", r.URL, path, st)
	}
	return out
}

// TestReplicas_sharedDatabase runs two `recsys serve` processes on one
// PostgreSQL database (issue 16, items 3-4): an event posted at A shows in
// B's next answer; a retrain asked at B runs at the elected leader A and
// both serve the new version within 5 s; activating a model at A switches
// B; a job running at A is cancelled at B; SIGKILL of the leader during a job makes B the leader within 30 s,
// the job is marked failed, and B keeps serving the previous model.
func TestReplicas_sharedDatabase(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := startReplica(t, dsn)
	within(t, 10*time.Second, "the first replica leads", func() bool { return a.leading(t) })
	b := startReplica(t, dsn)
	throughout(t, 2*jobs.DefaultLeadEvery, func() string {
		if la, lb := a.leading(t), b.leading(t); lb || !la {
			return fmt.Sprintf("leaders: a %v, b %v; want a only", la, lb)
		}
		return ""
	})

	// Events at A, read at B at once: the history is the database's.
	postViews(t, a, 1500, 40, 120)
	before := b.recs(t, "u1", "")
	if len(before.Items) == 0 {
		t.Fatalf("B recommends nothing: %+v", before)
	}
	top := before.Items[0].ItemID
	if st := a.postJSON(t, "/interactions", map[string]any{"interactions": []map[string]any{{"user_id": "u1", "item_id": top, "type": "view"}}}, nil); st != http.StatusCreated {
		t.Fatalf("POST /interactions at A = %d", st)
	}
	if after := b.recs(t, "u1", ""); slices.ContainsFunc(after.Items, func(s api.ScoredItem) bool { return s.ItemID == top }) {
		t.Fatalf("B still recommends %s to u1 right after u1 viewed it at A: %+v", top, after.Items)
	}

	// An item first seen in an event at A is in B's catalogue at once.
	if st := a.postJSON(t, "/interactions", map[string]any{"interactions": []map[string]any{{"user_id": "u1", "item_id": "brand-new", "type": "view"}}}, nil); st != http.StatusCreated {
		t.Fatalf("POST /interactions at A = %d", st)
	}
	if st := b.getJSON(t, "/items/brand-new", nil); st != http.StatusOK {
		t.Fatalf("GET /items/brand-new at B = %d", st)
	}
	b.recs(t, "u1", "")

	// Popularity at B follows A's events: "hot", viewed by more users than
	// any other item, heads B's fallback list within 5 s (a write count
	// checked every second, then the 2 s popularity cache).
	if top := b.recs(t, "nobody", ""); len(top.Items) == 0 || top.Items[0].ItemID == "hot" {
		t.Fatalf("B's fallback before: %+v", top)
	}
	var hot []map[string]any
	for u := range 3000 {
		hot = append(hot, map[string]any{"user_id": fmt.Sprintf("h%d", u), "item_id": "hot", "type": "view"})
	}
	if st := a.postJSON(t, "/interactions", map[string]any{"interactions": hot}, nil); st != http.StatusCreated {
		t.Fatalf("POST /interactions at A = %d", st)
	}
	took := within(t, 5*time.Second, "B's fallback puts hot first", func() bool {
		r := b.recs(t, "nobody", "")
		return len(r.Items) > 0 && r.Items[0].ItemID == "hot"
	})
	t.Logf("B's popularity followed A's events after %v", took)

	// A retrain asked at B runs at the leader A; both replicas list the
	// same job and serve the new versions within 5 s of its end.
	id := b.retrain(t, "itemknn", "userknn")
	j := waitJob(t, a.getter(t), id, 5*time.Minute, api.Job.Done)
	if j.State != api.JobSucceeded || len(j.Versions) != 2 {
		t.Fatalf("job at A: %+v", j)
	}
	t.Logf("queued at B, started at the leader A %v later", j.StartedAt.Sub(j.CreatedAt))
	var jb api.Job
	if st := b.getJSON(t, "/admin/jobs/"+id, &jb); st != http.StatusOK || jb.State != api.JobSucceeded {
		t.Fatalf("job at B: %d %+v", st, jb)
	}
	version := strings.SplitN(j.Versions[0], "@", 2)[1] // itemknn@v…
	for _, r := range []replica{a, b} {
		took := within(t, 5*time.Second, r.URL+" serves itemknn "+version, func() bool {
			// 503 model_not_ready until the replica has loaded it.
			var out api.RecommendationsOut
			return r.getJSON(t, "/users/u2/recommendations?n=10&model=itemknn", &out) == http.StatusOK && out.ModelVersion == version
		})
		t.Logf("%s serves the new version after %v", r.URL, took)
	}

	// Activating at A switches B.
	active := b.recs(t, "u2", "").Model
	other := "userknn"
	if active == other {
		other = "itemknn"
	}
	if st := a.postJSON(t, "/admin/models/"+other+"/activate", map[string]any{}, nil); st != http.StatusOK {
		t.Fatalf("activate %s at A = %d", other, st)
	}
	took = within(t, 5*time.Second, "B switches to "+other, func() bool { return b.recs(t, "u2", "").Model == other })
	t.Logf("B switched its active model after %v", took)
	serving := b.recs(t, "u2", "")

	// Cancelling at B a job that runs at the leader A stops it there.
	id = b.retrain(t)
	waitJob(t, b.getter(t), id, time.Minute, func(j api.Job) bool { return j.State != api.JobQueued })
	if st, _ := b.do(t, http.MethodDelete, "/admin/jobs/"+id, "", nil); st != http.StatusAccepted {
		t.Fatalf("DELETE /admin/jobs/%s at B = %d", id, st)
	}
	if j := waitJob(t, a.getter(t), id, 30*time.Second, api.Job.Done); j.State != api.JobCancelled {
		t.Fatalf("job cancelled at B = %+v", j)
	}

	// SIGKILL the leader while it trains: B takes over, the job fails,
	// and B keeps serving what it served.
	id = b.retrain(t)
	waitJob(t, b.getter(t), id, time.Minute, func(j api.Job) bool { return j.State != api.JobQueued })
	if b.leading(t) || !a.leading(t) {
		t.Fatalf("before the kill, leaders: a %v, b %v; want a only", a.leading(t), b.leading(t))
	}
	a.kill()
	killed := time.Now()
	within(t, 30*time.Second, "B becomes the leader", func() bool { return b.leading(t) })
	t.Logf("B leads %v after the kill", time.Since(killed))
	j = waitJob(t, b.getter(t), id, 10*time.Second, api.Job.Done)
	if j.State != api.JobFailed || !strings.Contains(j.Error, "interrupted") {
		t.Fatalf("the killed leader's job = %+v; want failed, interrupted", j)
	}
	if now := b.recs(t, "u2", ""); now.Model != serving.Model || now.ModelVersion != serving.ModelVersion || !sameItems(now.Items, serving.Items) {
		t.Fatalf("after failover B serves %+v; before %+v", now, serving)
	}
	// The new leader runs the next job.
	if j := waitJob(t, b.getter(t), b.retrain(t, "itemknn"), 5*time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("job at the new leader: %+v", j)
	}
}
