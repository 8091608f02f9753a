package main

import (
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// testContractServingBudget: on a server whose serving budget no real
// model meets, the first training measures and stores every recommender's
// serving cost (GET /models), activates the cheapest and lists the
// candidates over the budget in its record; activating another by hand
// answers 200 with a warning, and an experiment between them warns of
// both arms while it runs.
func testContractServingBudget(t *testing.T) {
	tiny := api.ServeBudget{MeanMS: 1e-6, P99MS: 1e-6}
	s := startContractServer(t, func(c *Config) { c.Jobs.Budget = tiny })
	s.do(t, contractCase{method: "POST", path: "/interactions", body: contractEvents(60, 30, 8), want: 201})
	id := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["popular","itemknn"]}`})
	j := s.waitJob(t, id)
	if j.State != api.JobSucceeded {
		t.Fatalf("training: %+v", j)
	}
	s.do(t, contractCase{name: "job over budget", method: "GET", path: "/admin/jobs/" + id, want: 200}).decode(t, &j)

	var models api.ModelsOut
	s.do(t, contractCase{name: "models with their serving cost", method: "GET", path: "/models", want: 200}).decode(t, &models)
	cost := map[string]*api.ServingCost{}
	for _, m := range models.Models {
		if c := m.ServingCost; c == nil || c.Requests < 1 || c.MeanMS <= 0 || c.P50MS > c.P99MS {
			t.Fatalf("%s: serving cost %+v", m.Name, c)
		}
		cost[m.Name] = m.ServingCost
	}
	cheapest, other := "popular", "itemknn"
	if cost["itemknn"].MeanMS < cost["popular"].MeanMS {
		cheapest, other = other, cheapest
	}
	if j.Activated != cheapest || len(j.OverBudget) != 2 {
		t.Fatalf("job activated %q with %+v over budget; want the cheapest (%s) and both over", j.Activated, j.OverBudget, cheapest)
	}

	var act api.ModelActivated
	s.do(t, contractCase{name: "activate over budget", method: "POST", path: "/admin/models/" + other + "/activate", want: 200}).decode(t, &act)
	if act.Name != other || !act.Active || !strings.Contains(act.Warning, tiny.String()) {
		t.Fatalf("activated %+v, want %s active with a warning naming the budget %s", act, other, tiny)
	}

	var exp api.ExperimentOut
	s.do(t, contractCase{name: "experiment over budget", method: "POST", path: "/admin/experiments",
		body: `{"name":"e","arms":[{"model":"popular","share":50},{"model":"itemknn","share":50}]}`, want: 201}).decode(t, &exp)
	if len(exp.Warnings) != 2 || !strings.Contains(exp.Warnings[0], "popular") || !strings.Contains(exp.Warnings[1], "itemknn") {
		t.Fatalf("experiment warnings %q, want one for each arm", exp.Warnings)
	}
	var stopped api.ExperimentOut
	s.do(t, contractCase{name: "stop the experiment", method: "POST", path: "/admin/experiments/" + exp.ID + "/stop", want: 200}).decode(t, &stopped)
	if stopped.State != "stopped" || len(stopped.Warnings) != 0 {
		t.Fatalf("a stopped experiment: %+v, want no warnings", stopped)
	}
}
