package main

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// jobGate holds the first job that reaches its "snapshot" stage, running,
// until the test opens the gate: a running job that lasts exactly as long as
// the test needs, whatever the machine's speed. The scheduler calls observe
// (jobs.Options.OnProgress) on the job's goroutine.
type jobGate struct {
	armed   atomic.Bool
	held    chan string
	release chan struct{}
	open    func()
}

func newJobGate() *jobGate {
	g := &jobGate{held: make(chan string, 1), release: make(chan struct{})}
	g.open = sync.OnceFunc(func() { close(g.release) })
	g.armed.Store(true)
	return g
}

func (g *jobGate) observe(j api.Job) {
	if j.State == api.JobRunning && j.Stage == "snapshot" && g.armed.CompareAndSwap(true, false) {
		g.held <- j.ID
		<-g.release
	}
}

// waitHeld waits until the gate holds the job id.
func (g *jobGate) waitHeld(t *testing.T, id string) {
	t.Helper()
	select {
	case got := <-g.held:
		if got != id {
			t.Fatalf("the gate holds job %s, want %s", got, id)
		}
	case <-time.After(time.Minute):
		t.Fatalf("job %s did not start within a minute", id)
	}
}

// testContractLifecycle drives the jobs, models and evaluations routes on a
// small data set: failed requests first, then a training job held running
// by a gate (409 for a second one, queueing, cancelling a queued and a
// running job), then the trained models, their activation, and
// evaluations. It ends with the store closed (500) and on a restart whose
// request timeout has passed (503), for the one operation the store_closed
// and timeout scenarios cannot reach: activating a trained model.
func testContractLifecycle(t *testing.T) {
	db := filepath.Join(t.TempDir(), "recsys.db")
	gate := newJobGate()
	s := startContractServer(t, func(cfg *Config) {
		cfg.DB = db
		// Requests that name no models get popularity alone: quick.
		cfg.Jobs.Models = []string{"popular"}
		cfg.Jobs.OnProgress = gate.observe
	})
	t.Cleanup(gate.open) // runs before the server's cleanup, which waits for the job
	long := strings.Repeat("x", 65)

	t.Run("before any job", func(t *testing.T) {
		var models api.ModelsOut
		s.do(t, contractCase{method: "GET", path: "/models", want: 200}).decode(t, &models)
		var jobsOut api.JobsOut
		s.do(t, contractCase{method: "GET", path: "/admin/jobs", want: 200}).decode(t, &jobsOut)
		var reports api.ReportsOut
		s.do(t, contractCase{method: "GET", path: "/evaluations", want: 200}).decode(t, &reports)
		if models.Models == nil || len(models.Models) > 0 || jobsOut.Jobs == nil || len(jobsOut.Jobs) > 0 ||
			reports.Evaluations == nil || len(reports.Evaluations) > 0 {
			t.Errorf("a fresh server lists models %v, jobs %v, evaluations %v; want three empty lists",
				models.Models, jobsOut.Jobs, reports.Evaluations)
		}
	})

	for _, ex := range []contractCase{
		{name: "job unknown", method: "GET", path: "/admin/jobs/j999999999999", want: 404},
		{name: "job control id", method: "GET", path: "/admin/jobs/%01", want: 400, invalid: true, field: "id"},
		{name: "job id with space", method: "GET", path: "/admin/jobs/a%20b", want: 400, invalid: true, field: "id"},
		{name: "job long id", method: "GET", path: "/admin/jobs/" + long, want: 400, invalid: true, field: "id"},
		{name: "cancel unknown", method: "DELETE", path: "/admin/jobs/j999999999999", want: 404},
		{name: "cancel control id", method: "DELETE", path: "/admin/jobs/%7F", want: 400, invalid: true, field: "id"},
		{name: "jobs limit 0", method: "GET", path: "/admin/jobs?limit=0", want: 400, invalid: true, field: "limit"},
		{name: "jobs limit 1001", method: "GET", path: "/admin/jobs?limit=1001", want: 400, invalid: true, field: "limit"},
		{name: "jobs limit word", method: "GET", path: "/admin/jobs?limit=all", want: 400, invalid: true, field: "limit"},
		{name: "evaluation unknown", method: "GET", path: "/evaluations/r999999999999", want: 404},
		{name: "evaluation control id", method: "GET", path: "/evaluations/%01", want: 400, invalid: true, field: "id"},
		{name: "evaluation long id", method: "GET", path: "/evaluations/" + long, want: 400, invalid: true, field: "id"},
		{name: "activate untrained", method: "POST", path: "/admin/models/itemknn/activate", want: 404},
		// Model names are the server's registry; the schema cannot list them.
		{name: "activate unknown", method: "POST", path: "/admin/models/no-such-model/activate", want: 404},
		{name: "activate long name", method: "POST", path: "/admin/models/" + long + "/activate", want: 400, invalid: true, field: "name"},

		{name: "retrain unknown model", method: "POST", path: "/admin/retrain", body: `{"models":["popular","no-such-model"]}`, want: 400, field: "models[1]"},
		{name: "retrain repeated model", method: "POST", path: "/admin/retrain", body: `{"models":["slim","slim"]}`, want: 400, field: "models[1]"},
		{name: "retrain empty name", method: "POST", path: "/admin/retrain", body: `{"models":[""]}`, want: 400, invalid: true, field: "models[0]"},
		{name: "retrain long name", method: "POST", path: "/admin/retrain", body: `{"models":["` + long + `"]}`, want: 400, invalid: true, field: "models[0]"},
		{name: "retrain too many models", method: "POST", path: "/admin/retrain", want: 400, invalid: true, field: "models",
			body: `{"models":["popular"` + strings.Repeat(`,"popular"`, 32) + `]}`},
		{name: "retrain models not an array", method: "POST", path: "/admin/retrain", body: `{"models":"popular"}`, want: 400, invalid: true, field: "models"},
		{name: "retrain queue not boolean", method: "POST", path: "/admin/retrain", body: `{"queue":"yes"}`, want: 400, invalid: true, field: "queue"},
		{name: "retrain unknown field", method: "POST", path: "/admin/retrain", body: `{"colour":1}`, want: 400, invalid: true, field: "colour"},
		{name: "retrain query queue word", method: "POST", path: "/admin/retrain?queue=maybe", ctype: "-", want: 400, invalid: true, field: "queue"},
		{name: "retrain malformed", method: "POST", path: "/admin/retrain", body: `{"models":[`, want: 400, invalid: true},
		{name: "retrain array body", method: "POST", path: "/admin/retrain", body: `[]`, want: 400, invalid: true},
		// An empty body is only the default when it comes without a
		// Content-Type; kin-openapi reads an empty optional body as absent.
		{name: "retrain empty json body", method: "POST", path: "/admin/retrain", ctype: "application/json", want: 400},
		{name: "retrain text/plain", method: "POST", path: "/admin/retrain", body: `{}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "retrain xml", method: "POST", path: "/admin/retrain", body: `{}`, ctype: "application/xml", want: 415, invalid: true},
		{name: "retrain no content type", method: "POST", path: "/admin/retrain", body: `{}`, ctype: "-", want: 403, invalid: true},

		{name: "evaluation unknown model", method: "POST", path: "/admin/evaluations", body: `{"models":["no-such-model"]}`, want: 400, field: "models[0]"},
		{name: "evaluation content metric", method: "POST", path: "/admin/evaluations", body: `{"models":["content"]}`, want: 400, field: "models[0]"},
		{name: "evaluation repeated model", method: "POST", path: "/admin/evaluations", body: `{"models":["popular","popular"]}`, want: 400, field: "models[1]"},
		{name: "activate content metric", method: "POST", path: "/admin/models/content/activate", want: 404},
		{name: "evaluation folds 11", method: "POST", path: "/admin/evaluations", body: `{"folds":11}`, want: 400, invalid: true, field: "folds"},
		{name: "evaluation folds negative", method: "POST", path: "/admin/evaluations", body: `{"folds":-1}`, want: 400, invalid: true, field: "folds"},
		{name: "evaluation folds fraction", method: "POST", path: "/admin/evaluations", body: `{"folds":1.5}`, want: 400, invalid: true, field: "folds"},
		{name: "evaluation bad protocol", method: "POST", path: "/admin/evaluations", body: `{"protocol":"leave-one-out"}`, want: 400, invalid: true, field: "protocol"},
		// The time protocol has one split; the users protocol tests disjoint
		// fifths of the users.
		{name: "evaluation time 2 folds", method: "POST", path: "/admin/evaluations", body: `{"protocol":"time","folds":2}`, want: 400, field: "folds"},
		{name: "evaluation users 6 folds", method: "POST", path: "/admin/evaluations", body: `{"protocol":"users","folds":6}`, want: 400, field: "folds"},
		{name: "evaluation seed not a number", method: "POST", path: "/admin/evaluations", body: `{"seed":"x"}`, want: 400, invalid: true, field: "seed"},
		{name: "evaluation unknown field", method: "POST", path: "/admin/evaluations", body: `{"fold":1}`, want: 400, invalid: true, field: "fold"},
		{name: "evaluation text/plain", method: "POST", path: "/admin/evaluations", body: `{}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "evaluation xml", method: "POST", path: "/admin/evaluations", body: `{}`, ctype: "application/xml", want: 415, invalid: true},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	t.Run("refused requests start no job", func(t *testing.T) {
		var out api.JobsOut
		s.do(t, contractCase{method: "GET", path: "/admin/jobs", want: 200}).decode(t, &out)
		if len(out.Jobs) > 0 {
			t.Errorf("jobs after refused requests: %+v", out.Jobs)
		}
	})

	s.do(t, contractCase{method: "POST", path: "/interactions", body: contractEvents(60, 30, 8), want: 201})

	// A training job held running by the gate.
	running := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["popular"]}`})
	gate.waitHeld(t, running)
	var dropped, queued, evaluation string
	t.Run("one training job at a time", func(t *testing.T) {
		if j := s.getJob(t, running); j.State != api.JobRunning || j.Kind != api.JobTrain || j.StartedAt == nil {
			t.Errorf("held job: %+v, want a running training job", j)
		}
		for _, ex := range []contractCase{
			{name: "second retrain", method: "POST", path: "/admin/retrain", body: `{"models":["itemknn"]}`, want: 409, field: "job_id"},
			{name: "second retrain without a body", method: "POST", path: "/admin/retrain", ctype: "-", want: 409, field: "job_id"},
		} {
			t.Run(ex.name, func(t *testing.T) {
				var e api.ErrorOut
				s.do(t, ex).decode(t, &e)
				if len(e.Error.Details) == 0 || e.Error.Details[0].Field != "job_id" || e.Error.Details[0].Problem != running {
					t.Errorf("409 details %+v, want details[0] = {job_id, %s}", e.Error.Details, running)
				}
			})
		}
		// The query parameter wins over the body.
		dropped = s.startJob(t, contractCase{method: "POST", path: "/admin/retrain?queue=true", body: `{"models":["itemknn"],"queue":false}`})
		queued = s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["popular","itemknn"],"queue":true}`})
		evaluation = s.startJob(t, contractCase{method: "POST", path: "/admin/evaluations", body: `{"models":["popular","itemknn"],"folds":1}`})

		var out api.JobsOut
		s.do(t, contractCase{method: "GET", path: "/admin/jobs", want: 200}).decode(t, &out)
		var ids, states []string
		for _, j := range out.Jobs {
			ids, states = append(ids, j.ID), append(states, j.State)
		}
		if want := []string{evaluation, queued, dropped, running}; !slices.Equal(ids, want) {
			t.Errorf("jobs %q, want %q (newest first)", ids, want)
		}
		if want := []string{"queued", "queued", "queued", "running"}; !slices.Equal(states, want) {
			t.Errorf("job states %q, want %q", states, want)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		var j api.Job
		s.do(t, contractCase{name: "queued", method: "DELETE", path: "/admin/jobs/" + dropped, want: 202}).decode(t, &j)
		if j.ID != dropped || j.State != api.JobCancelled || j.FinishedAt == nil {
			t.Errorf("cancelling a queued job answered %+v, want it cancelled", j)
		}
		s.do(t, contractCase{name: "queued again", method: "DELETE", path: "/admin/jobs/" + dropped, want: 409})

		s.do(t, contractCase{name: "running", method: "DELETE", path: "/admin/jobs/" + running, want: 202}).decode(t, &j)
		if j.ID != running || j.State != api.JobRunning {
			t.Errorf("cancelling a running job answered %+v, want its running record", j)
		}
		gate.open()
		if j = s.waitJob(t, running); j.State != api.JobCancelled || j.Error == "" || j.FinishedAt == nil {
			t.Errorf("the cancelled job ended as %+v, want cancelled", j)
		}
		s.do(t, contractCase{name: "running again", method: "DELETE", path: "/admin/jobs/" + running, want: 409})
		if j = s.getJob(t, dropped); j.State != api.JobCancelled || j.StartedAt != nil {
			t.Errorf("the dropped job is %+v, want cancelled before it started", j)
		}
	})
	gate.open()

	t.Run("queued jobs run", func(t *testing.T) {
		j := s.waitJob(t, queued)
		if j.State != api.JobSucceeded || j.Progress != 1 || len(j.Stages) == 0 || len(j.Versions) != 2 || j.Trigger != "api" {
			t.Fatalf("queued training job: %+v, want succeeded with two versions", j)
		}
		var models api.ModelsOut
		s.do(t, contractCase{method: "GET", path: "/models", want: 200}).decode(t, &models)
		var names []string
		active := 0
		for _, m := range models.Models {
			names = append(names, m.Name)
			if m.JobID != queued {
				t.Errorf("model %s@%s from job %q, want %s", m.Name, m.Version, m.JobID, queued)
			}
			if m.Active {
				active++
			}
		}
		if !slices.Equal(names, []string{"itemknn", "popular"}) || active != 1 {
			t.Errorf("models %q with %d active, want itemknn and popular, one active", names, active)
		}
	})

	t.Run("activate", func(t *testing.T) {
		for _, name := range []string{"popular", "itemknn"} {
			var m api.ModelInfo
			s.do(t, contractCase{method: "POST", path: "/admin/models/" + name + "/activate", want: 200}).decode(t, &m)
			if m.Name != name || !m.Active {
				t.Errorf("activating %s answered %+v", name, m)
			}
			var rec api.RecommendationsOut
			s.do(t, contractCase{method: "GET", path: "/users/u0/recommendations", want: 200}).decode(t, &rec)
			if rec.Model != name || rec.Fallback != "" {
				t.Errorf("after activating %s, recommendations come from %q (fallback %q)", name, rec.Model, rec.Fallback)
			}
		}
		s.do(t, contractCase{name: "trained by no job", method: "POST", path: "/admin/models/userknn/activate", want: 404})
	})

	var reportID string
	t.Run("evaluation", func(t *testing.T) {
		j := s.waitJob(t, evaluation)
		if j.State != api.JobSucceeded || j.Kind != api.JobEvaluate || j.ReportID == "" || j.Folds != 1 || j.Protocol != "standard" {
			t.Fatalf("evaluation job: %+v, want a succeeded one-fold evaluation with a report", j)
		}
		reportID = j.ReportID
		var list api.ReportsOut
		s.do(t, contractCase{method: "GET", path: "/evaluations", want: 200}).decode(t, &list)
		if len(list.Evaluations) != 1 || list.Evaluations[0].ID != reportID ||
			!slices.Equal(list.Evaluations[0].Models, []string{"popular", "itemknn"}) {
			t.Errorf("evaluations %+v, want the report %s of popular and itemknn", list.Evaluations, reportID)
		}
		var rep api.Report
		s.do(t, contractCase{method: "GET", path: "/evaluations/" + reportID, want: 200}).decode(t, &rep)
		if rep.ID != reportID || rep.Folds != 1 || len(rep.Rows) != 3 || len(rep.Rows[1].Metrics) == 0 ||
			rep.Rows[2].Model != "auto" || len(rep.Rows[2].Folds) != 1 || !slices.Contains([]string{"popular", "itemknn"}, rep.Rows[2].Folds[0].Model) {
			t.Errorf("report %+v, want one fold, two rows with metrics and the auto row choosing one of them", rep)
		}
	})

	// The users and time protocols on the stored data: the time protocol
	// reads each pair's first event time from the users' histories.
	t.Run("evaluation protocols", func(t *testing.T) {
		for _, tc := range []struct {
			body, protocol string
			folds          int
		}{
			{`{"models":["popular","itemknn"],"protocol":"users","folds":2}`, "users", 2},
			{`{"models":["popular","itemknn"],"protocol":"time"}`, "time", 1},
		} {
			j := s.waitJob(t, s.startJob(t, contractCase{method: "POST", path: "/admin/evaluations", body: tc.body}))
			if j.State != api.JobSucceeded || j.Protocol != tc.protocol || j.Folds != tc.folds {
				t.Fatalf("%s evaluation job: %+v", tc.protocol, j)
			}
			var rep api.Report
			s.do(t, contractCase{method: "GET", path: "/evaluations/" + j.ReportID, want: 200}).decode(t, &rep)
			if rep.Protocol != tc.protocol || rep.Folds != tc.folds || len(rep.Rows) != 3 || rep.Rows[1].Metrics["adg"].Mean <= 0 || rep.Rows[2].Model != "auto" {
				t.Errorf("%s report %+v", tc.protocol, rep)
			}
		}
	})

	t.Run("skipped content metric", func(t *testing.T) {
		j := s.waitJob(t, s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["popular","content"]}`}))
		if j.State != api.JobSucceeded || len(j.Skipped) != 1 || j.Skipped[0].Model != "content" || !strings.Contains(j.Skipped[0].Reason, "no item has features") {
			t.Errorf("a retrain of content with no item features: %+v, want it succeeded with content skipped for that reason", j)
		}
		var out api.JobsOut
		s.do(t, contractCase{method: "GET", path: "/admin/jobs?limit=1", want: 200}).decode(t, &out)
		if len(out.Jobs) != 1 || len(out.Jobs[0].Skipped) != 1 {
			t.Errorf("the job list shows %+v, want the skipped content metric", out.Jobs)
		}
	})

	t.Run("bodiless requests take the defaults", func(t *testing.T) {
		j := s.waitJob(t, s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", ctype: "-"}))
		if j.State != api.JobSucceeded || !slices.Equal(j.Models, []string{"popular"}) {
			t.Errorf("bodiless retrain: %+v, want the server's models (popular) trained", j)
		}
		j = s.waitJob(t, s.startJob(t, contractCase{method: "POST", path: "/admin/evaluations", ctype: "-"}))
		if j.State != api.JobSucceeded || !slices.Equal(j.Models, []string{"popular"}) || j.Folds != 3 || j.Protocol != "standard" || j.Seed != 1 {
			t.Errorf("bodiless evaluation: %+v, want popular, 3 folds, standard, seed 1", j)
		}
		var out api.JobsOut
		s.do(t, contractCase{method: "GET", path: "/admin/jobs?limit=1", want: 200}).decode(t, &out)
		if len(out.Jobs) != 1 || out.Jobs[0].ID != j.ID {
			t.Errorf("jobs?limit=1 = %+v, want the newest job %s alone", out.Jobs, j.ID)
		}
	})

	// Activating a served model writes to the store.
	t.Run("activate with the store closed", func(t *testing.T) {
		if err := s.app.store.Close(); err != nil {
			t.Fatal(err)
		}
		s.do(t, contractCase{method: "POST", path: "/admin/models/itemknn/activate", want: 500})
	})
	s.stop()
	t.Run("activate past the request timeout", func(t *testing.T) {
		r := startContractServer(t, func(cfg *Config) { cfg.DB, cfg.Limits.RequestTimeout = db, -time.Second })
		if r.app.engine.Lookup("itemknn") == nil {
			t.Fatal("the restarted server does not serve the persisted itemknn")
		}
		r.do(t, contractCase{method: "POST", path: "/admin/models/itemknn/activate", want: 503})
	})
}
