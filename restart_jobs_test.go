package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// A graceful restart (SIGTERM to the real binary, then a new start on the
// same database) keeps the queued jobs: the job that was running when the
// process stopped is failed as interrupted, the ones queued behind it,
// which never started, stay queued and run after the start, in order. On
// both stores.
func TestRestart_gracefulKeepsQueuedJobs(t *testing.T) {
	bin := testBinary(t)
	for _, store := range []string{"bolt", "postgres"} {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "queue.db")
			if store == "postgres" {
				db = pgtest.Schema(t)
			}
			importClustered(t, bin, db, dir)
			cmd, url := startBinary(t, db, "--retrain-after", "0", "--retrain-interval", "0", "--allow-fallback")
			get := httpGetter(t, url)
			post := func(path, body string) string {
				t.Helper()
				resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var acc api.JobAccepted
				if err := json.NewDecoder(resp.Body).Decode(&acc); err != nil || resp.StatusCode != http.StatusAccepted {
					t.Fatalf("POST %s: %d %v", path, resp.StatusCode, err)
				}
				return acc.JobID
			}
			running := post("/admin/retrain", `{"models":["itemknn","slim","kunn"]}`)
			waitJob(t, get, running, time.Minute, func(j api.Job) bool { return j.State == api.JobRunning && strings.HasPrefix(j.Stage, "tune") })
			var queued []string
			for range 3 {
				queued = append(queued, post("/admin/evaluations", `{"models":["popular"],"folds":2}`))
			}
			for _, id := range queued {
				if j := waitJob(t, get, id, time.Second, func(api.Job) bool { return true }); j.State != api.JobQueued {
					t.Fatalf("job %s before the stop: %+v, want queued", id, j)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("serve after SIGTERM: %v", err)
			}

			_, url = startBinary(t, db, "--retrain-after", "0", "--retrain-interval", "0", "--allow-fallback")
			get = httpGetter(t, url)
			var prev time.Time
			for _, id := range queued {
				j := waitJob(t, get, id, time.Minute, api.Job.Done)
				if j.State != api.JobSucceeded || j.StartedAt == nil || j.StartedAt.Before(prev) {
					t.Fatalf("queued job %s after the restart: %+v, want succeeded, started after the one queued before it", id, j)
				}
				prev = *j.StartedAt
			}
			if j := waitJob(t, get, running, time.Second, func(api.Job) bool { return true }); j.State != api.JobFailed || j.Error != "interrupted: the process stopped while the job was running" {
				t.Fatalf("the job running at the stop, after the restart: %+v, want failed as interrupted", j)
			}
		})
	}
}
