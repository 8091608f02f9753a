package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// TestOnline_experimentEndToEnd runs the simulation of
// recsys/online.TestSimulation_namesBetterArm once through the real HTTP
// server on 127.0.0.1: 120 users, split 50/50 between popular and
// itemknn, each shown five lists of ten, click each shown item with a
// known probability (30% under itemknn, 10% under popular) and post the
// clicks with the recommendation_id. The experiment then names itemknn,
// each arm counts exactly what the clients saw and clicked, each arm's
// interval holds its true CTR, and the online report and /metrics agree.
func TestOnline_experimentEndToEnd(t *testing.T) {
	a := startApp(t, nil)
	if st := a.postJSON(t, "/interactions", rawJSON(contractEvents(120, 60, 8)), nil); st != 201 {
		t.Fatalf("POST /interactions: %d", st)
	}
	var job api.JobAccepted
	if st := a.postJSON(t, "/admin/retrain", map[string]any{"models": []string{"itemknn"}}, &job); st != 202 {
		t.Fatalf("retrain: %d", st)
	}
	waitJobDone(t, a, job.JobID)

	truth := map[string]float64{"popular": 0.10, "itemknn": 0.30}
	var exp api.ExperimentOut
	if st := a.postJSON(t, "/admin/experiments", map[string]any{"name": "knn-vs-popular", "min_impressions": 500,
		"arms": []map[string]any{{"model": "popular", "share": 50}, {"model": "itemknn", "share": 50}}}, &exp); st != 201 {
		t.Fatalf("POST /admin/experiments: %d", st)
	}
	rng := rand.New(rand.NewPCG(18, 4))
	shown, clicked := map[string]int64{}, map[string]int64{}
	byModel := map[string]int64{}
	for round := range 5 {
		for u := range 120 {
			var rec api.RecommendationsOut
			if st := a.getJSON(t, fmt.Sprintf("/users/u%d/recommendations?n=10", u), &rec); st != 200 {
				t.Fatalf("round %d, u%d: %d", round, u, st)
			}
			if rec.Experiment != exp.ID || rec.RecommendationID == "" {
				t.Fatalf("u%d: %+v, want the experiment and an id", u, rec)
			}
			shown[rec.Arm] += int64(len(rec.Items))
			byModel[rec.Model] += int64(len(rec.Items))
			var clicks []map[string]string
			for _, it := range rec.Items {
				if rng.Float64() < truth[rec.Arm] {
					clicks = append(clicks, map[string]string{"user_id": rec.UserID, "item_id": it.ItemID,
						"type": "click", "recommendation_id": rec.RecommendationID})
				}
			}
			if len(clicks) == 0 {
				continue
			}
			var out api.InteractionsOut
			if st := a.postJSON(t, "/interactions", map[string]any{"interactions": clicks}, &out); st != 201 || out.Attributed != len(clicks) {
				t.Fatalf("posting %d clicks: %d %+v, want all attributed", len(clicks), st, out)
			}
			clicked[rec.Arm] += int64(len(clicks))
		}
	}

	if st := a.getJSON(t, "/admin/experiments/"+exp.ID, &exp); st != 200 {
		t.Fatalf("GET experiment: %d", st)
	}
	for _, arm := range exp.Arms {
		p := truth[arm.Model]
		if arm.Impressions != shown[arm.Model] || arm.Clicks != clicked[arm.Model] {
			t.Errorf("arm %s: %d shown, %d clicks; the clients saw %d and clicked %d", arm.Model, arm.Impressions, arm.Clicks, shown[arm.Model], clicked[arm.Model])
		}
		if arm.CTR.Low > p || arm.CTR.High < p {
			t.Errorf("arm %s: CTR %.3f [%.3f, %.3f] does not hold the true %.2f", arm.Model, arm.CTR.Rate, arm.CTR.Low, arm.CTR.High, p)
		}
		t.Logf("arm %s: %d shown, %d clicks, CTR %.3f [%.3f, %.3f], true %.2f", arm.Model, arm.Impressions, arm.Clicks, arm.CTR.Rate, arm.CTR.Low, arm.CTR.High, p)
	}
	if exp.Winner != "itemknn" || !exp.Test.Decisive {
		t.Errorf("winner %q, test %+v; want itemknn, decisive", exp.Winner, exp.Test)
	}

	// The same counts per serving model in the report and in /metrics.
	var rep api.OnlineReportOut
	if st := a.getJSON(t, "/admin/online", &rep); st != 200 {
		t.Fatalf("GET /admin/online: %d", st)
	}
	_, metrics := a.do(t, http.MethodGet, "/metrics", "", nil)
	for _, row := range rep.Totals {
		if row.Impressions != byModel[row.Model] {
			t.Errorf("report: %s showed %d, the clients saw %d", row.Model, row.Impressions, byModel[row.Model])
		}
		line := fmt.Sprintf("recsys_online_impressions_total{model=%q} %d\n", row.Model, row.Impressions)
		if !strings.Contains(string(metrics), line) {
			t.Errorf("/metrics lacks %q", line)
		}
		// Each serving model's ranking time, by name (recsys/serving).
		if timed := fmt.Sprintf("recsys_recommend_ranking_seconds_count{model=%q} ", row.Model); !strings.Contains(string(metrics), timed) {
			t.Errorf("/metrics lacks %q", timed)
		}
	}
	if len(rep.Totals) == 0 {
		t.Error("the online report is empty")
	}
}

// rawJSON is a body that is JSON already.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// waitJobDone polls a job until it has ended, and fails unless it succeeded.
func waitJobDone(tb testing.TB, a *testApp, id string) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var j api.Job
		if st := a.getJSON(tb, "/admin/jobs/"+id, &j); st != 200 {
			tb.Fatalf("GET job: %d", st)
		}
		if j.Done() {
			if j.State != api.JobSucceeded {
				tb.Fatalf("job %s: %+v", id, j)
			}
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("job %s still %s after a minute", id, j.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
