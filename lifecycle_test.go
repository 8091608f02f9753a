package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/jobs"
)

// clustered generates implicit feedback with taste clusters: user u likes
// mostly the items of cluster u % clusters, with popularity falling along
// item indices.
func clustered(users, items, perUser, clusters int, seed uint64) []api.Interaction {
	rng := rand.New(rand.NewPCG(seed, 1))
	var evs []api.Interaction
	for u := 0; u < users; u++ {
		c := u % clusters
		seen := map[int]bool{}
		for len(seen) < perUser {
			var i int
			if rng.Float64() < 0.8 {
				i = c + clusters*int(float64(items/clusters)*rng.Float64()*rng.Float64())
			} else {
				i = rng.IntN(items)
			}
			if i >= items || seen[i] {
				continue
			}
			seen[i] = true
			evs = append(evs, api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", i), Type: "view"})
		}
	}
	return evs
}

func (a *testApp) load(tb testing.TB, evs []api.Interaction) {
	tb.Helper()
	for k := 0; k < len(evs); k += api.MaxBatch {
		if _, err := a.store.AddInteractions(context.Background(), evs[k:min(k+api.MaxBatch, len(evs))]); err != nil {
			tb.Fatal(err)
		}
	}
}

// retrain posts /admin/retrain and returns the job id.
func (a *testApp) retrain(tb testing.TB, models ...string) string {
	tb.Helper()
	var out api.JobAccepted
	if status := a.postJSON(tb, "/admin/retrain", map[string]any{"models": models}, &out); status != http.StatusAccepted {
		tb.Fatalf("retrain: status %d", status)
	}
	return out.JobID
}

// waitJob polls a job until cond holds or the timeout passes.
func waitJob(tb testing.TB, get func(string, any) int, id string, timeout time.Duration, cond func(api.Job) bool) api.Job {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var j api.Job
		if status := get("/admin/jobs/"+id, &j); status != http.StatusOK {
			tb.Fatalf("job %s: status %d", id, status)
		}
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			tb.Fatalf("job %s: condition not reached in %v; last %+v", id, timeout, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (a *testApp) getter(tb testing.TB) func(string, any) int {
	return func(p string, out any) int { return a.getJSON(tb, p, out) }
}

func (a *testApp) recommend(tb testing.TB, user string) api.RecommendationsOut {
	tb.Helper()
	var out api.RecommendationsOut
	if status := a.getJSON(tb, "/users/"+user+"/recommendations?n=10", &out); status != http.StatusOK {
		tb.Fatalf("recommendations for %s: status %d", user, status)
	}
	return out
}

// TestRetrain_swapUnderLoad keeps recommendation requests going while a
// retrain runs and swaps: no request fails or exceeds the request timeout,
// and after the swap the answers come from the new version.
func TestRetrain_swapUnderLoad(t *testing.T) {
	const timeout = 2 * time.Second
	a := startApp(t, func(c *Config) { c.Limits.RequestTimeout = timeout })
	a.load(t, clustered(400, 300, 30, 4, 1))
	first := waitJob(t, a.getter(t), a.retrain(t, "itemknn"), time.Minute, api.Job.Done)
	if first.State != api.JobSucceeded {
		t.Fatalf("first training: %+v", first)
	}
	oldVersion := a.recommend(t, "u1").ModelVersion

	var (
		stop     atomic.Bool
		requests atomic.Int64
		worst    atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !stop.Load(); k++ {
				start := time.Now()
				resp, err := client.Get(fmt.Sprintf("%s/users/u%d/recommendations?n=10", a.URL, (w*97+k)%400))
				d := time.Since(start)
				if d > time.Duration(worst.Load()) {
					worst.Store(int64(d))
				}
				requests.Add(1)
				if err != nil || resp.StatusCode != http.StatusOK {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%v %v", err, resp))
					mu.Unlock()
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		}()
	}
	second := waitJob(t, a.getter(t), a.retrain(t, "itemknn", "slim"), time.Minute, api.Job.Done)
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if second.State != api.JobSucceeded {
		t.Fatalf("second training: %+v", second)
	}
	if len(failures) > 0 {
		t.Fatalf("%d of %d requests failed during the retrain, first: %s", len(failures), requests.Load(), failures[0])
	}
	if w := time.Duration(worst.Load()); w >= timeout {
		t.Fatalf("slowest request took %v, the timeout is %v", w, timeout)
	}
	got := a.recommend(t, "u1")
	if got.Model != "itemknn" || got.ModelVersion == oldVersion || !strings.Contains(strings.Join(second.Versions, ","), "itemknn@"+got.ModelVersion) {
		t.Fatalf("after the swap: model %s version %s; old %s, job produced %v", got.Model, got.ModelVersion, oldVersion, second.Versions)
	}
	t.Logf("%d requests during the retrain, slowest %v", requests.Load(), time.Duration(worst.Load()))
}

// TestRetrain_conflictAndQueue: a second training request gets 409 naming
// the running job, or is queued when asked.
func TestRetrain_conflictAndQueue(t *testing.T) {
	a := startApp(t, nil)
	a.load(t, clustered(400, 300, 30, 4, 2))
	id := a.retrain(t, "slim")
	status, body := a.do(t, http.MethodPost, "/admin/retrain", "application/json", []byte(`{"models":["itemknn"]}`))
	if status != http.StatusConflict || !strings.Contains(string(body), id) {
		t.Fatalf("second retrain: %d %s, want 409 naming %s", status, body, id)
	}
	var queued api.JobAccepted
	if status := a.postJSON(t, "/admin/retrain", map[string]any{"models": []string{"itemknn"}, "queue": true}, &queued); status != http.StatusAccepted {
		t.Fatalf("queued retrain: status %d", status)
	}
	j := waitJob(t, a.getter(t), queued.JobID, time.Minute, api.Job.Done)
	if j.State != api.JobSucceeded {
		t.Fatalf("queued job: %+v", j)
	}
	if status, body := a.do(t, http.MethodPost, "/admin/retrain", "application/json", []byte(`{"models":["nonsense"]}`)); status != http.StatusBadRequest || !strings.Contains(string(body), "models[0]") {
		t.Fatalf("unknown model: %d %s", status, body)
	}
}

// TestJobs_cancel: a cancelled job stops within a second and leaves the
// active model untouched.
func TestJobs_cancel(t *testing.T) {
	a := startApp(t, nil)
	a.load(t, clustered(1500, 800, 40, 5, 3))
	if j := waitJob(t, a.getter(t), a.retrain(t, "itemknn"), time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("first training: %+v", j)
	}
	before := a.recommend(t, "u3")
	id := a.retrain(t, "slim", "kunn", "userknn", "kunn-u")
	waitJob(t, a.getter(t), id, time.Minute, func(j api.Job) bool { return strings.HasPrefix(j.Stage, "tune") })
	start := time.Now()
	if status, body := a.do(t, http.MethodDelete, "/admin/jobs/"+id, "", nil); status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", status, body)
	}
	j := waitJob(t, a.getter(t), id, 5*time.Second, api.Job.Done)
	if took := time.Since(start); j.State != api.JobCancelled || took > time.Second {
		t.Fatalf("cancelled job: state %s after %v, want cancelled within 1s", j.State, took)
	}
	after := a.recommend(t, "u3")
	if after.Model != before.Model || after.ModelVersion != before.ModelVersion {
		t.Fatalf("active model changed by a cancelled job: %s@%s → %s@%s", before.Model, before.ModelVersion, after.Model, after.ModelVersion)
	}
	if status, _ := a.do(t, http.MethodDelete, "/admin/jobs/"+id, "", nil); status != http.StatusConflict {
		t.Fatalf("cancelling an ended job: status %d, want 409", status)
	}
}

// TestRestart_servesPersistedModel: a restart serves the persisted model,
// same version, without retraining.
func TestRestart_servesPersistedModel(t *testing.T) {
	db := filepath.Join(t.TempDir(), "persist.db")
	a := startApp(t, func(c *Config) { c.DB = db })
	a.load(t, clustered(300, 200, 20, 3, 4))
	if j := waitJob(t, a.getter(t), a.retrain(t, "itemknn", "userknn"), time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("training: %+v", j)
	}
	if status, body := a.do(t, http.MethodPost, "/admin/models/userknn/activate", "", nil); status != http.StatusOK {
		t.Fatalf("activate: %d %s", status, body)
	}
	want := a.recommend(t, "u2")
	var jobsBefore api.JobsOut
	a.getJSON(t, "/admin/jobs", &jobsBefore)
	a.stopNow(t)

	b := startApp(t, func(c *Config) { c.DB = db })
	if status, body := b.do(t, http.MethodGet, "/readyz", "", nil); status != http.StatusOK {
		t.Fatalf("readyz after restart: %d %s", status, body)
	}
	got := b.recommend(t, "u2")
	if got.Model != "userknn" || got.ModelVersion != want.ModelVersion || fmt.Sprint(got.Items) != fmt.Sprint(want.Items) {
		t.Fatalf("after restart: %+v, want %+v", got, want)
	}
	var jobsAfter api.JobsOut
	b.getJSON(t, "/admin/jobs", &jobsAfter)
	if len(jobsAfter.Jobs) != len(jobsBefore.Jobs) {
		t.Fatalf("a restart started jobs: %d → %d", len(jobsBefore.Jobs), len(jobsAfter.Jobs))
	}
}

// TestTraining_sigkill kills the real binary during a training job; the
// restart serves the previous model and reports the job failed.
func TestTraining_sigkill(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "kill.db")
	importClustered(t, bin, db, dir)
	if out, err := execCommand(bin, "train", "--db", db, "--models", "itemknn"); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	cmd, url := startBinary(t, db, "--retrain-after", "0")
	get := httpGetter(t, url)
	var before api.RecommendationsOut
	get("/users/u7/recommendations", &before)
	if before.Model != "itemknn" {
		t.Fatalf("before: %+v", before)
	}
	resp, err := http.Post(url+"/admin/retrain", "application/json", strings.NewReader(`{"models":["itemknn","slim","kunn"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var acc api.JobAccepted
	json.NewDecoder(resp.Body).Decode(&acc)
	resp.Body.Close()
	waitJob(t, get, acc.JobID, time.Minute, func(j api.Job) bool { return j.State == api.JobRunning && strings.HasPrefix(j.Stage, "tune") })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	_, url = startBinary(t, db, "--retrain-after", "0")
	get = httpGetter(t, url)
	j := waitJob(t, get, acc.JobID, time.Second, func(api.Job) bool { return true })
	if j.State != api.JobFailed || !strings.Contains(j.Error, "interrupted") {
		t.Fatalf("killed job after restart: %+v, want failed (interrupted)", j)
	}
	var after api.RecommendationsOut
	get("/users/u7/recommendations", &after)
	if after.Model != before.Model || after.ModelVersion != before.ModelVersion || after.Fallback != "" {
		t.Fatalf("after restart: %+v, want the previous model %s@%s", after, before.Model, before.ModelVersion)
	}
}

func httpGetter(tb testing.TB, base string) func(string, any) int {
	return func(p string, out any) int {
		tb.Helper()
		resp, err := http.Get(base + p)
		if err != nil {
			tb.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode < 300 {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				tb.Fatal(err)
			}
		}
		return resp.StatusCode
	}
}

// TestRetrain_autoActivatesBest: an auto job activates the model with the
// best validation ADG even when another is active, and says so in its
// record; a plain retrain leaves the active model alone; an auto job that
// names no models fits the server's models and auto mode's other
// candidates (issues 5 and 37).
func TestRetrain_autoActivatesBest(t *testing.T) {
	a := startApp(t, nil)
	a.load(t, clustered(300, 200, 20, 4, 5))
	if j := waitJob(t, a.getter(t), a.retrain(t, "popular"), time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("first training: %+v", j)
	}
	if got := a.recommend(t, "u1").Model; got != "popular" {
		t.Fatalf("active after the first training: %s", got)
	}
	// Without auto, a better model does not displace the active one.
	if j := waitJob(t, a.getter(t), a.retrain(t, "itemknn"), time.Minute, api.Job.Done); j.State != api.JobSucceeded || j.Activated != "" {
		t.Fatalf("plain retrain: %+v", j)
	}
	if got := a.recommend(t, "u1").Model; got != "popular" {
		t.Fatalf("a plain retrain changed the active model to %s", got)
	}

	var acc api.JobAccepted
	if status := a.postJSON(t, "/admin/retrain", map[string]any{"models": []string{"popular", "itemknn", "kunn", "febr"}, "auto": true}, &acc); status != http.StatusAccepted {
		t.Fatalf("auto retrain: status %d", status)
	}
	j := waitJob(t, a.getter(t), acc.JobID, 2*time.Minute, api.Job.Done)
	if j.State != api.JobSucceeded || !j.Auto {
		t.Fatalf("auto job: %+v", j)
	}
	var models api.ModelsOut
	a.getJSON(t, "/models", &models)
	best, bestADG := "", -1.0
	for _, m := range models.Models {
		if m.JobID == j.ID && m.Validation["adg"] > bestADG {
			best, bestADG = m.Name, m.Validation["adg"]
		}
	}
	if best == "popular" || best == "" {
		t.Fatalf("on clustered data a personalised model should win, got %q", best)
	}
	if j.Activated != best {
		t.Fatalf("auto job activated %q, the best validation ADG is %s (%.4f)", j.Activated, best, bestADG)
	}
	if got := a.recommend(t, "u1").Model; got != best {
		t.Fatalf("serving %s after the auto job, want %s", got, best)
	}

	status, body := a.do(t, http.MethodPost, "/admin/retrain?auto=true", "", nil)
	if status != http.StatusAccepted || json.Unmarshal(body, &acc) != nil {
		t.Fatalf("auto retrain without models: %d %s", status, body)
	}
	j = waitJob(t, a.getter(t), acc.JobID, 10*time.Minute, api.Job.Done) // every auto candidate, under -race
	wantModels, wantAdded := jobs.AutoJobModels(jobs.DefaultModels)
	if j.State != api.JobSucceeded || !slices.Equal(j.Models, wantModels) || !slices.Equal(j.Additions, wantAdded) || len(j.Versions) != len(wantModels)-1 {
		t.Fatalf("auto job without models: state %s, models %v, additions %v, versions %v; want %v with %v added, every one but content (no features) trained",
			j.State, j.Models, j.Additions, j.Versions, wantModels, wantAdded)
	}
}

// importClustered imports, with the binary's import command, a CSV of
// clustered(2000, 1000, 40, 5, 5) written into dir: enough data that a
// training job of a tuned model runs for seconds.
func importClustered(tb testing.TB, bin, db, dir string) {
	tb.Helper()
	var csv strings.Builder
	for _, ev := range clustered(2000, 1000, 40, 5, 5) {
		fmt.Fprintf(&csv, "%s,%s\n", ev.UserID, ev.ItemID)
	}
	csvPath := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	if out, err := execCommand(bin, "import", "--db", db, "--format", "csv", csvPath); err != nil {
		tb.Fatalf("import: %v\n%s", err, out)
	}
}
