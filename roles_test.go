package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// TestServeFlags_role: --role defaults to all, takes its value from
// RECSYS_ROLE, and refuses an unknown role naming the ones it takes.
func TestServeFlags_role(t *testing.T) {
	clearRecsysEnv(t)
	for _, c := range []struct {
		env  string
		args []string
		want Role
	}{
		{"", nil, RoleAll},
		{"", []string{"--role", "serve"}, RoleServe},
		{"train", nil, RoleTrain},
		{"train", []string{"--role", "all"}, RoleAll},
	} {
		if c.env != "" {
			t.Setenv("RECSYS_ROLE", c.env)
		}
		got, err := parseServeFlags(c.args, io.Discard)
		if err != nil || got.Role != c.want {
			t.Errorf("RECSYS_ROLE=%q %v: role %q, %v; want %q", c.env, c.args, got.Role, err, c.want)
		}
	}
	_, err := parseServeFlags([]string{"--role", "trainer"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `--role "trainer"`) || !strings.Contains(err.Error(), "serve") {
		t.Fatalf("--role trainer: %v; want a refusal naming the roles", err)
	}
}

// TestRole_bboltRefused: a bbolt file is one process's, so --role serve
// (which would queue jobs nobody runs) and --role train (which would keep
// the data from any server) are refused on one before the file is
// created, saying what to do; --role all is today's server.
func TestRole_bboltRefused(t *testing.T) {
	for _, role := range []Role{RoleServe, RoleTrain} {
		db := filepath.Join(t.TempDir(), "one.db")
		_, err := NewApp(context.Background(), Config{Addr: "127.0.0.1:0", DB: db, Policy: api.DefaultPolicy(), Role: role})
		if err == nil || !strings.Contains(err.Error(), "--role "+string(role)+" needs a PostgreSQL database") ||
			!strings.Contains(err.Error(), "leave --role at all") {
			t.Errorf("--role %s on bbolt: %v; want a refusal that says PostgreSQL and --role all", role, err)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("--role %s on bbolt created the database (%v)", role, err)
		}
	}
	a := startApp(t, func(c *Config) { c.Role = RoleAll })
	if got := metricValue(t, a, `recsys_role{role="all"}`); got != "1" {
		t.Fatalf(`recsys_role{role="all"} = %s; want 1`, got)
	}
}

// TestRole_trainReadyWithoutModel: a train process on an empty database
// is ready (it trains the first model and serves none), where a serve
// replica without --allow-fallback waits for a model; each exports its
// role.
func TestRole_trainReadyWithoutModel(t *testing.T) {
	dsn := pgtest.Schema(t)
	tr := startApp(t, func(c *Config) { c.DB, c.Role = dsn, RoleTrain })
	sv := startApp(t, func(c *Config) { c.DB, c.Role = dsn, RoleServe })
	if st, body := tr.do(t, http.MethodGet, "/readyz", "", nil); st != http.StatusOK {
		t.Errorf("train /readyz with no model = %d %s; want 200", st, body)
	}
	if st, body := sv.do(t, http.MethodGet, "/readyz", "", nil); st != http.StatusServiceUnavailable {
		t.Errorf("serve /readyz with no model = %d %s; want 503", st, body)
	}
	for _, c := range []struct {
		a    *testApp
		role Role
	}{{tr, RoleTrain}, {sv, RoleServe}} {
		if got := metricValue(t, c.a, `recsys_role{role="`+string(c.role)+`"}`); got != "1" {
			t.Errorf(`recsys_role{role="%s"} = %s; want 1`, c.role, got)
		}
	}
}

// trainedHere counts the training jobs the process ran to success: its
// recsys_jobs_finished_total, which has no sample before the first.
func trainedHere(t *testing.T, r replica) float64 {
	t.Helper()
	status, body := r.do(t, http.MethodGet, "/metrics", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics at %s = %d", r.URL, status)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, `recsys_jobs_finished_total{kind="train",state="succeeded"} `); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// TestRoles_serveAndTrain runs two `recsys serve --role serve` replicas
// and one `--role train` process on one PostgreSQL database (issue 37): the
// trainer leads and the serve replicas never do; the trainer answers only
// the health, metrics and admin routes; a retrain asked at a serve replica
// runs at the trainer only, and both replicas serve its model; with the
// trainer killed the replicas keep serving and a job asked meanwhile stays
// queued, until a second trainer takes the lock and runs it.
func TestRoles_serveAndTrain(t *testing.T) {
	dsn := pgtest.Schema(t)
	s1 := startReplica(t, dsn, "--role", "serve")
	s2 := startReplica(t, dsn, "--role", "serve")
	tr := startReplica(t, dsn, "--role", "train")
	within(t, 10*time.Second, "the trainer leads", func() bool { return tr.leading(t) })
	throughout(t, 2*jobs.DefaultLeadEvery, func() string {
		if l1, l2 := s1.leading(t), s2.leading(t); l1 || l2 {
			return fmt.Sprintf("serve replicas lead: %v, %v", l1, l2)
		}
		return ""
	})
	for _, c := range []struct {
		r    replica
		role Role
	}{{s1, RoleServe}, {s2, RoleServe}, {tr, RoleTrain}} {
		if got := metricValue(t, c.r.testApp, `recsys_role{role="`+string(c.role)+`"}`); got != "1" {
			t.Errorf("%s: recsys_role{role=%q} = %s; want 1", c.r.URL, c.role, got)
		}
	}

	// The trainer refuses data routes, naming its role; its admin routes
	// answer.
	st, body := tr.do(t, http.MethodGet, "/users/u1/recommendations", "", nil)
	var refusal api.ErrorOut
	if err := json.Unmarshal(body, &refusal); err != nil || st != http.StatusNotFound || !strings.Contains(refusal.Error.Message, "--role train") {
		t.Fatalf("recommendations at the trainer = %d %s; want 404 naming --role train", st, body)
	}
	if st := tr.getJSON(t, "/admin/jobs", nil); st != http.StatusOK {
		t.Fatalf("GET /admin/jobs at the trainer = %d", st)
	}

	// A retrain asked at a serve replica runs at the trainer, and both
	// replicas serve the model it activates (the first one trained).
	postViews(t, s1, 600, 30, 100)
	serveVersion := func(r replica, version string) {
		t.Helper()
		took := within(t, 10*time.Second, r.URL+" serves "+version, func() bool { return r.recs(t, "u2", "").ModelVersion == version })
		t.Logf("%s serves %s after %v", r.URL, version, took)
	}
	// finish waits for job id, asked at at, to succeed, and checks that
	// runner has run runs training jobs and the others none; it returns the
	// version the job made.
	finish := func(id string, at, runner replica, runs float64, others ...replica) string {
		t.Helper()
		j := waitJob(t, at.getter(t), id, 5*time.Minute, api.Job.Done)
		if j.State != api.JobSucceeded || len(j.Versions) != 1 {
			t.Fatalf("job %s asked at %s: %+v", id, at.URL, j)
		}
		// The counter moves just after the record ends.
		within(t, 5*time.Second, runner.URL+" counts the job", func() bool { return trainedHere(t, runner) == runs })
		for _, r := range others {
			if n := trainedHere(t, r); n != 0 {
				t.Errorf("%s ran %v training jobs; want none", r.URL, n)
			}
		}
		return strings.SplitN(j.Versions[0], "@", 2)[1] // itemknn@v…
	}
	first := finish(s2.retrain(t, "itemknn"), s2, tr, 1, s1, s2)
	serveVersion(s1, first)
	serveVersion(s2, first)

	// With the trainer killed the replicas keep serving the model, lead
	// not, and a retrain asked meanwhile stays queued: nobody runs it.
	tr.kill()
	id := s1.retrain(t, "itemknn")
	throughout(t, 3*jobs.DefaultLeadEvery, func() string {
		for _, r := range []replica{s1, s2} {
			if r.leading(t) {
				return r.URL + " leads without a trainer"
			}
			if v := r.recs(t, "u2", "").ModelVersion; v != first {
				return fmt.Sprintf("%s serves version %q; want %q", r.URL, v, first)
			}
		}
		var j api.Job
		if st := s2.getJSON(t, "/admin/jobs/"+id, &j); st != http.StatusOK || j.State != api.JobQueued {
			return fmt.Sprintf("the job asked without a trainer: %d %+v; want it queued", st, j)
		}
		return ""
	})

	// A second trainer takes the lock and runs that job; both replicas
	// serve its model.
	tr2 := startReplica(t, dsn, "--role", "train")
	took := within(t, 30*time.Second, "the second trainer leads", func() bool { return tr2.leading(t) })
	t.Logf("the second trainer leads %v after it answers", took)
	next := finish(id, s1, tr2, 1, s1, s2)
	if next == first {
		t.Fatalf("the job at the second trainer made version %s again", next)
	}
	serveVersion(s1, next)
	serveVersion(s2, next)
}
