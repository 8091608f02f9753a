package main

import (
	"math"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// /metrics gives the bbolt file's size, as the file system sees it, and
// the part of it in free pages (recsys compact's gain).
func TestMetrics_dbSize(t *testing.T) {
	var db string
	a := startApp(t, func(c *Config) { db = c.DB })
	size, err := strconv.ParseFloat(metricValue(t, a, "recsys_db_bytes"), 64)
	if err != nil {
		t.Fatal(err)
	}
	free, err := strconv.ParseFloat(metricValue(t, a, "recsys_db_free_bytes"), 64)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if size != float64(fi.Size()) || free < 0 || free >= size {
		t.Fatalf("recsys_db_bytes %v (file %d), recsys_db_free_bytes %v", size, fi.Size(), free)
	}
}

// /metrics counts the jobs that ended, by kind and state, and tells when
// the active model was trained: the two an operator alerts on (failed
// trainings, a model too old because none succeeds).
func TestMetrics_jobsAndModelAge(t *testing.T) {
	a := startApp(t, func(c *Config) { c.Jobs.NewEvents, c.Jobs.Interval, c.AllowFallback = 0, 0, true })
	if v := metricValue(t, a, "recsys_active_model_trained_timestamp_seconds"); v != "0" {
		t.Fatalf("trained timestamp with no model %s, want 0", v)
	}
	a.load(t, clustered(60, 40, 8, 3, 2))
	if j := waitJob(t, a.getter(t), a.retrain(t, "itemknn"), time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("training job %+v", j)
	}
	var acc api.JobAccepted
	if st := a.postJSON(t, "/admin/evaluations", map[string]any{"models": []string{"popular"}, "folds": 2}, &acc); st != http.StatusAccepted {
		t.Fatalf("POST /admin/evaluations = %d", st)
	}
	waitJob(t, a.getter(t), acc.JobID, time.Minute, api.Job.Done)
	for _, c := range []struct{ name, want string }{
		{`recsys_jobs_finished_total{kind="train",state="succeeded"}`, "1"},
		{`recsys_jobs_finished_total{kind="evaluate",state="succeeded"}`, "1"},
	} {
		if got := metricValue(t, a, c.name); got != c.want {
			t.Fatalf("%s = %s, want %s", c.name, got, c.want)
		}
	}
	var ms api.ModelsOut
	a.getJSON(t, "/models", &ms)
	got, err := strconv.ParseFloat(metricValue(t, a, "recsys_active_model_trained_timestamp_seconds"), 64)
	if err != nil || len(ms.Models) != 1 || math.Abs(got-float64(ms.Models[0].TrainedAt.UnixNano())/1e9) > 1e-3 {
		t.Fatalf("trained timestamp %v (%v), want that of %+v", got, err, ms.Models)
	}
}
