package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/api/client"
)

// waitClientJob polls a job through the client until it ends.
func waitClientJob(t *testing.T, c *client.Client, id string) api.Job {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		j, err := c.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Done() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s did not end: %+v", id, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantCode fails unless err is a *client.Error with the status and code.
func wantCode(t *testing.T, what string, err error, status int, code string) *client.Error {
	t.Helper()
	e, ok := err.(*client.Error)
	if !ok || e.Status != status || e.Code != code || client.Code(err) != code || e.RequestID == "" {
		t.Fatalf("%s: %v, want a *client.Error %d %s with a request id", what, err, status, code)
	}
	return e
}

// TestClient_liveServer drives every operation of openapi.yaml but the
// dashboard through package client against the real App on loopback, and
// checks the typed answers against what the server holds.
func TestClient_liveServer(t *testing.T) {
	a := startApp(t, nil)
	c := client.New(a.URL, client.WithHTTPClient(&http.Client{Timeout: time.Minute}))
	ctx := context.Background()

	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "ready before training", c.Ready(ctx), 503, api.CodeModelNotReady)
	var evs []api.InteractionIn
	for u := range 30 {
		for k := range 6 {
			evs = append(evs, api.InteractionIn{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", (u*u+3*k*u+5*k)%30)})
		}
	}
	evs = append(evs, api.InteractionIn{UserID: "u0", ItemID: "x,1"}, api.InteractionIn{UserID: "u1", ItemID: "x,1"})
	if n, err := c.AddInteractions(ctx, evs); err != nil || n != len(evs) {
		t.Fatalf("AddInteractions: %d, %v; want %d", n, err, len(evs))
	}
	_, err := c.AddInteractions(ctx, []api.InteractionIn{{UserID: "u", ItemID: ""}})
	if e := wantCode(t, "bad event", err, 400, api.CodeInvalid); len(e.Details) == 0 || e.Details[0].Field != "interactions[0].item_id" {
		t.Fatalf("bad event details: %+v", e.Details)
	}
	if n, err := c.AddInteractionsJSON(ctx, []byte(`{"interactions":[{"user_id":"u29","item_id":"i1"}]}`)); err != nil || n != 1 {
		t.Fatalf("AddInteractionsJSON: %d, %v", n, err)
	}

	// The catalogue.
	var items []api.ItemIn
	for i := range 30 {
		items = append(items, api.ItemIn{ID: fmt.Sprintf("i%d", i), Categories: []string{fmt.Sprintf("c%d", i%2)}, Labels: map[string]string{"n": fmt.Sprint(i)}})
	}
	if n, err := c.PutItems(ctx, items); err != nil || n != 30 {
		t.Fatalf("PutItems: %d, %v", n, err)
	}
	it, err := c.PutItem(ctx, "extra", api.ItemIn{Features: api.Features{"a": 1}})
	if err != nil || it.ID != "extra" || it.Features["a"] != 1 {
		t.Fatalf("PutItem: %+v, %v", it, err)
	}
	if it, err = c.PatchItem(ctx, "i3", map[string]any{"hidden": true}); err != nil || !it.Hidden || it.Labels["n"] != "3" {
		t.Fatalf("PatchItem: %+v, %v", it, err)
	}
	if it, err = c.Item(ctx, "i3"); err != nil || !it.Hidden || !slices.Equal(it.Categories, []string{"c1"}) {
		t.Fatalf("Item: %+v, %v", it, err)
	}
	var all []string
	for p := (client.Page{Limit: 7}); ; {
		page, err := c.Items(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			all = append(all, it.ID)
		}
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	// In natural order: i2 before i10.
	wantIDs := []string{"extra"}
	for i := range 30 {
		wantIDs = append(wantIDs, fmt.Sprintf("i%d", i))
	}
	if wantIDs = append(wantIDs, "x,1"); !slices.Equal(all, wantIDs) {
		t.Fatalf("Items paged through %v, want %v", all, wantIDs)
	}
	if err := c.DeleteItem(ctx, "extra"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Item(ctx, "extra")
	wantCode(t, "deleted item", err, 404, api.CodeNotFound)

	// Users.
	var users []string
	for p := (client.Page{Limit: 7}); ; {
		page, err := c.Users(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range page.Users {
			users = append(users, u.ID)
		}
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	wantIDs = wantIDs[:0]
	for u := range 30 {
		wantIDs = append(wantIDs, fmt.Sprintf("u%d", u))
	}
	if !slices.Equal(users, wantIDs) {
		t.Fatalf("Users paged through %v, want %v", users, wantIDs)
	}
	u, err := c.User(ctx, "u0")
	if err != nil || u.ID != "u0" || u.Items != 7 {
		t.Fatalf("User: %+v, %v", u, err)
	}
	h, err := c.UserInteractions(ctx, "u0", client.Page{Limit: 1000})
	if err != nil || len(h.Interactions) != 7 {
		t.Fatalf("UserInteractions: %+v, %v", h, err)
	}
	if err := c.DeleteInteraction(ctx, "u29", "i1"); err != nil {
		t.Fatal(err)
	}
	add := []api.InteractionIn{{UserID: "gone", ItemID: "i1"}}
	if _, err := c.AddInteractions(ctx, add); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteUser(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	_, err = c.User(ctx, "gone")
	wantCode(t, "deleted user", err, 404, api.CodeNotFound)

	// Training and models.
	acc, err := c.Retrain(ctx, api.RetrainIn{Models: []string{"itemknn", "ease"}})
	if err != nil || acc.JobID == "" {
		t.Fatalf("Retrain: %+v, %v", acc, err)
	}
	if j := waitClientJob(t, c, acc.JobID); j.State != api.JobSucceeded {
		t.Fatalf("training: %+v", j)
	}
	if _, err := c.CancelJob(ctx, acc.JobID); client.Code(err) != api.CodeConflict {
		t.Fatalf("cancelling an ended job: %v, want conflict", err)
	}
	jobs, err := c.Jobs(ctx, 10)
	if err != nil || len(jobs) != 1 || jobs[0].ID != acc.JobID {
		t.Fatalf("Jobs: %+v, %v", jobs, err)
	}
	ms, err := c.Models(ctx)
	if err != nil || len(ms.Models) != 2 || !slices.Contains(ms.Recommenders, "ease") {
		t.Fatalf("Models: %+v, %v", ms, err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := c.ActivateModel(ctx, "ease")
	if err != nil || info.Name != "ease" || !info.Active {
		t.Fatalf("ActivateModel: %+v, %v", info, err)
	}

	// Recommendations: paging, categories, exclusion (an id with a comma).
	full, err := c.Recommend(ctx, "u2", client.RecommendOptions{N: 20, IncludeConsumed: true})
	if err != nil || full.Model != "ease" || len(full.Items) != 20 {
		t.Fatalf("Recommend: %+v, %v", full, err)
	}
	page, err := c.Recommend(ctx, "u2", client.RecommendOptions{N: 10, Offset: 10, IncludeConsumed: true})
	if err != nil || !sameScored(page.Items, full.Items[10:]) {
		t.Fatalf("page 2: %+v, %v; want %v", page.Items, err, full.Items[10:])
	}
	withX, err := c.Recommend(ctx, "u2", client.RecommendOptions{N: 30, Model: "itemknn"})
	if err != nil || !slices.ContainsFunc(withX.Items, func(s api.ScoredItem) bool { return s.ItemID == "x,1" }) {
		t.Fatalf("u2 should be offered x,1: %+v, %v", withX, err)
	}
	noX, err := c.Recommend(ctx, "u2", client.RecommendOptions{N: 30, Model: "itemknn", Exclude: []string{"x,1", "i0"}})
	want := slices.DeleteFunc(slices.Clone(withX.Items), func(s api.ScoredItem) bool { return s.ItemID == "x,1" || s.ItemID == "i0" })
	if err != nil || len(noX.Items) != len(withX.Items)-2 || !sameScored(noX.Items, want) || slices.ContainsFunc(noX.Items, func(s api.ScoredItem) bool { return s.ItemID == "x,1" }) {
		t.Fatalf("exclude x,1: %+v, %v", noX, err)
	}
	cats, err := c.Recommend(ctx, "u2", client.RecommendOptions{N: 5, Categories: []string{"c1"}, Explain: true})
	if err != nil || len(cats.Items) != 5 {
		t.Fatalf("categories: %+v, %v", cats, err)
	}
	// Diversity: items iN are in c{N%2}, and x,1 in none; two per
	// category is the first two of each in the model's order, and x,1.
	two, err := c.Recommend(ctx, "u2", client.RecommendOptions{N: 30, Model: "itemknn", Diversity: client.DiversityOptions{MaxPerCategory: 2}})
	var wantTwo []api.ScoredItem
	seen := map[byte]int{}
	for _, it := range withX.Items {
		if it.ItemID == "x,1" || seen[it.ItemID[len(it.ItemID)-1]%2] < 2 {
			seen[it.ItemID[len(it.ItemID)-1]%2]++
			wantTwo = append(wantTwo, it)
		}
	}
	if err != nil || len(wantTwo) != 5 || !sameScored(two.Items, wantTwo) {
		t.Fatalf("max_per_category=2: %+v, %v; want %v", two.Items, err, wantTwo)
	}
	one, err := c.Recommend(ctx, "u2", client.RecommendOptions{N: 30, Model: "itemknn", Diversity: client.DiversityOptions{Lambda: client.Lambda(1)}})
	if err != nil || !sameScored(one.Items, withX.Items) {
		t.Fatalf("diversity=1: %+v, %v; want %v", one.Items, err, withX.Items)
	}
	_, err = c.Recommend(ctx, "u2", client.RecommendOptions{Diversity: client.DiversityOptions{Lambda: client.Lambda(1.5)}})
	if e := wantCode(t, "diversity=1.5", err, 400, api.CodeInvalid); e.Details[0].Field != "diversity" {
		t.Fatalf("diversity=1.5: %+v", e)
	}
	rrTwo, err := c.RerankWith(ctx, "u2", api.RerankIn{Items: itemIDs(withX.Items), Model: "itemknn", MaxPerCategory: &[]int{2}[0]})
	if err != nil || !sameScored(rrTwo.Items, wantTwo) {
		t.Fatalf("RerankWith max_per_category=2: %+v, %v; want %v", rrTwo.Items, err, wantTwo)
	}
	_, err = c.Recommend(ctx, "u2", client.RecommendOptions{Model: "nope"})
	if e := wantCode(t, "unknown model", err, 400, api.CodeInvalid); e.Details[0].Field != "model" || !strings.Contains(e.Message, "itemknn") {
		t.Fatalf("unknown model: %+v", e)
	}

	// From examples and rerank.
	var hist []string
	for _, e := range h.Interactions {
		hist = append(hist, e.ItemID)
	}
	anon, err := c.RecommendForItems(ctx, api.RecommendIn{Items: append(hist, "ghost")})
	mine, err2 := c.Recommend(ctx, "u0", client.RecommendOptions{})
	if err != nil || err2 != nil || !sameScored(anon.Items, mine.Items) || !slices.Equal(anon.UnknownItems, []string{"ghost"}) {
		t.Fatalf("RecommendForItems: %+v %v, want %+v %v", anon, err, mine, err2)
	}
	_, err = c.RecommendForItems(ctx, api.RecommendIn{Items: []string{}})
	wantCode(t, "no items", err, 400, api.CodeInvalid)
	rr, err := c.Rerank(ctx, "u2", []string{full.Items[3].ItemID, "ghost", full.Items[1].ItemID}, "")
	if err != nil || !sameScored(rr.Items, []api.ScoredItem{full.Items[1], full.Items[3]}) || !slices.Equal(rr.UnknownItems, []string{"ghost"}) {
		t.Fatalf("Rerank: %+v, %v", rr, err)
	}

	sim, err := c.Similar(ctx, "i1", client.SimilarOptions{N: 4, By: "collaborative"})
	if err != nil || sim.ItemID != "i1" || len(sim.Items) != 4 {
		t.Fatalf("Similar: %+v, %v", sim, err)
	}
	simX, err := c.Similar(ctx, "i1", client.SimilarOptions{N: 3, Exclude: []string{sim.Items[1].ItemID}})
	if err != nil || !sameScored(simX.Items, []api.ScoredItem{sim.Items[0], sim.Items[2], sim.Items[3]}) {
		t.Fatalf("Similar excluding %s: %+v, %v; want %v", sim.Items[1].ItemID, simX, err, sim.Items)
	}
	_, err = c.SearchSimilar(ctx, api.SearchIn{Features: api.Features{"a": 1}})
	wantCode(t, "search without a content metric", err, 503, api.CodeModelNotReady)

	// Evaluation.
	acc, err = c.Evaluate(ctx, api.EvaluationIn{Models: []string{"popular"}, Folds: 1})
	if err != nil {
		t.Fatal(err)
	}
	j := waitClientJob(t, c, acc.JobID)
	if j.State != api.JobSucceeded || j.ReportID == "" {
		t.Fatalf("evaluation: %+v", j)
	}
	reps, err := c.Evaluations(ctx)
	if err != nil || len(reps) != 1 || reps[0].ID != j.ReportID {
		t.Fatalf("Evaluations: %+v, %v", reps, err)
	}
	rep, err := c.Evaluation(ctx, j.ReportID)
	if err != nil || rep.ID != j.ReportID || len(rep.Rows) != 1 || rep.Rows[0].Model != "popular" {
		t.Fatalf("Evaluation: %+v, %v", rep, err)
	}
	_, err = c.Evaluation(ctx, "no-such-report")
	wantCode(t, "unknown report", err, 404, api.CodeNotFound)

	// Online measurement: a list, a click on its first item sent back
	// with its id, and the report counting both; then an experiment.
	totals := func() api.OnlineRow {
		t.Helper()
		on, err := c.Online(ctx, client.OnlineQuery{Model: "ease"})
		if err != nil || len(on.Totals) > 1 {
			t.Fatalf("Online: %+v, %v", on, err)
		}
		if len(on.Totals) == 0 {
			return api.OnlineRow{Model: "ease"}
		}
		return on.Totals[0]
	}
	before := totals()
	rec, err := c.Recommend(ctx, "u5", client.RecommendOptions{N: 5, Model: "ease"})
	if err != nil || rec.RecommendationID == "" || len(rec.Items) == 0 {
		t.Fatalf("Recommend for the online report: %+v, %v", rec, err)
	}
	click := []api.InteractionIn{{UserID: "u5", ItemID: rec.Items[0].ItemID, RecommendationID: rec.RecommendationID}}
	if n, err := c.AddInteractions(ctx, click); err != nil || n != 1 {
		t.Fatalf("a click: %d, %v", n, err)
	}
	tot := totals()
	if tot.Model != "ease" || tot.Lists != before.Lists+1 || tot.Impressions != before.Impressions+int64(len(rec.Items)) ||
		tot.Clicks != before.Clicks+1 || tot.CTR.Rate != float64(tot.Clicks)/float64(tot.Impressions) ||
		tot.CTR.Low > tot.CTR.Rate || tot.CTR.High < tot.CTR.Rate {
		t.Fatalf("Online totals %+v after %+v, want one more list of %d items, one more click, and the CTR in its interval", tot, before, len(rec.Items))
	}
	// An anonymous history's list is named too, and a click that sends its
	// id back is credited whoever posts it (the visitor signed in as u7).
	guest, err := c.RecommendForItems(ctx, api.RecommendIn{Items: []string{"i1", "i2"}, Model: "ease"})
	if err != nil || guest.RecommendationID == "" || len(guest.Items) == 0 {
		t.Fatalf("RecommendForItems for the online report: %+v, %v", guest, err)
	}
	click = []api.InteractionIn{{UserID: "u7", ItemID: guest.Items[0].ItemID, RecommendationID: guest.RecommendationID}}
	if n, err := c.AddInteractions(ctx, click); err != nil || n != 1 {
		t.Fatalf("a click on the anonymous list: %d, %v", n, err)
	}
	if after := totals(); after.Lists != tot.Lists+1 || after.Impressions != tot.Impressions+int64(len(guest.Items)) || after.Clicks != tot.Clicks+1 {
		t.Fatalf("Online totals %+v after %+v, want the anonymous list of %d items and its click counted", after, tot, len(guest.Items))
	}
	_, err = c.Online(ctx, client.OnlineQuery{From: "yesterday"})
	wantCode(t, "bad day", err, 400, api.CodeInvalid)
	_, err = c.StartExperiment(ctx, api.ExperimentIn{Name: "bad", Arms: []api.Arm{{Model: "itemknn", Share: 50}, {Model: "ease", Share: 40}}})
	wantCode(t, "shares summing to 90", err, 400, api.CodeInvalid)
	x, err := c.StartExperiment(ctx, api.ExperimentIn{Name: "knn vs ease", Arms: []api.Arm{{Model: "itemknn", Share: 50}, {Model: "ease", Share: 50}}})
	if err != nil || x.ID == "" || x.State != "running" || len(x.Arms) != 2 {
		t.Fatalf("StartExperiment: %+v, %v", x, err)
	}
	if xs, err := c.Experiments(ctx); err != nil || len(xs.Experiments) != 1 || xs.Experiments[0].ID != x.ID {
		t.Fatalf("Experiments: %+v, %v", xs, err)
	}
	arms := map[string]bool{}
	for u := range 30 {
		r, err := c.Recommend(ctx, fmt.Sprintf("u%d", u), client.RecommendOptions{N: 3})
		if err != nil || r.Experiment != x.ID || r.Arm != r.Model {
			t.Fatalf("Recommend in the experiment: %+v, %v", r, err)
		}
		arms[r.Arm] = true
	}
	if !arms["itemknn"] || !arms["ease"] {
		t.Fatalf("30 users fell in the arms %v, want both", arms)
	}
	if got, err := c.Experiment(ctx, x.ID); err != nil || got.ID != x.ID || len(got.Arms) != 2 {
		t.Fatalf("Experiment: %+v, %v", got, err)
	}
	if got, err := c.StopExperiment(ctx, x.ID); err != nil || got.State != "stopped" || got.StoppedAt == nil {
		t.Fatalf("StopExperiment: %+v, %v", got, err)
	}
	_, err = c.Experiment(ctx, "no-such-experiment")
	wantCode(t, "unknown experiment", err, 404, api.CodeNotFound)

	// Rules and placements: a pin moves the last of u1's list first, at
	// the placement that names it only.
	base, err := c.Recommend(ctx, "u1", client.RecommendOptions{N: 1000})
	if err != nil || len(base.Items) < 3 {
		t.Fatalf("Recommend u1: %+v, %v", base, err)
	}
	last := base.Items[len(base.Items)-1].ItemID
	if r, err := c.CreateRule(ctx, api.RuleIn{Name: "pin-last", Condition: `id == "` + last + `"`, Action: "pin", Position: 1,
		Placements: []string{"home"}}); err != nil || r.Name != "pin-last" || !r.Active {
		t.Fatalf("CreateRule: %+v, %v", r, err)
	}
	_, err = c.CreateRule(ctx, api.RuleIn{Name: "bad", Condition: "1 +", Action: "bury"})
	if e := wantCode(t, "bad condition", err, 400, api.CodeInvalid); len(e.Details) == 0 || e.Details[0].Field != "condition" {
		t.Fatalf("bad condition details: %+v", e.Details)
	}
	if p, err := c.PutPlacement(ctx, "home", api.PlacementIn{N: 2, Filter: `labels.n != "0"`}); err != nil || p.N != 2 {
		t.Fatalf("PutPlacement: %+v, %v", p, err)
	}
	home, err := c.Recommend(ctx, "u1", client.RecommendOptions{Steering: client.SteeringOptions{Placement: "home"}, Explain: true})
	if err != nil || len(home.Items) != 2 || home.Items[0].ItemID != last || !slices.Equal(home.Items[0].Rules, []string{"pin-last"}) || home.Placement != "home" {
		t.Fatalf("Recommend at home: %+v, %v; want %s pinned first of 2", home, err, last)
	}
	if got, err := c.Recommend(ctx, "u1", client.RecommendOptions{N: 2, Steering: client.SteeringOptions{Filter: `id != "` + base.Items[0].ItemID + `"`}}); err != nil ||
		!slices.Equal(itemIDs(got.Items), itemIDs(base.Items[1:3])) {
		t.Fatalf("Recommend with a filter: %+v, %v", got, err)
	}
	if sim, err := c.Similar(ctx, "i1", client.SimilarOptions{N: 3, Steering: client.SteeringOptions{Filter: "false"}}); err != nil || len(sim.Items) != 0 {
		t.Fatalf("Similar filtered out: %+v, %v", sim, err)
	}
	if r, err := c.ReplaceRule(ctx, "pin-last", api.RuleIn{Condition: "true", Action: "bury"}); err != nil || r.Action != "bury" {
		t.Fatalf("ReplaceRule: %+v, %v", r, err)
	}
	if r, err := c.Rule(ctx, "pin-last"); err != nil || r.Action != "bury" || len(r.Placements) != 0 {
		t.Fatalf("Rule: %+v, %v", r, err)
	}
	if rs, err := c.Rules(ctx); err != nil || len(rs.Rules) != 1 {
		t.Fatalf("Rules: %+v, %v", rs, err)
	}
	if p, err := c.Placement(ctx, "home"); err != nil || p.Filter != `labels.n != "0"` {
		t.Fatalf("Placement: %+v, %v", p, err)
	}
	if ps, err := c.Placements(ctx); err != nil || len(ps.Placements) != 1 {
		t.Fatalf("Placements: %+v, %v", ps, err)
	}
	// The home list and a click on its second item: the online report's
	// home row is 1 list, 2 shown, 1 click, CTR 0.5.
	if n, err := c.AddInteractions(ctx, []api.InteractionIn{{UserID: "u1", ItemID: home.Items[1].ItemID, RecommendationID: home.RecommendationID}}); err != nil || n != 1 {
		t.Fatalf("a click on the home list: %d, %v", n, err)
	}
	on, err := c.Online(ctx, client.OnlineQuery{})
	if err != nil || len(on.Placements) != 2 || on.Placements[0].Placement != "" || on.Placements[1].Placement != "home" {
		t.Fatalf("Online placements: %+v, %v; want none and home", on.Placements, err)
	}
	if p := on.Placements[1]; p.Lists != 1 || p.Impressions != 2 || p.Clicks != 1 || p.CTR.Rate != 0.5 {
		t.Fatalf("Online at home: %+v, want 1 list, 2 shown, 1 click, CTR 0.5", p)
	}
	if err := c.DeleteRule(ctx, "pin-last"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePlacement(ctx, "home"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Recommend(ctx, "u1", client.RecommendOptions{Steering: client.SteeringOptions{Placement: "home"}})
	wantCode(t, "deleted placement", err, 404, api.CodeNotFound)

	st, err := c.Stats(ctx, 7)
	if err != nil || st.Users != 30 || st.Items != 31 || len(st.EventsByDay) == 0 {
		t.Fatalf("Stats: %+v, %v", st, err)
	}
	m, err := c.Metrics(ctx)
	if err != nil || !strings.Contains(m, "# TYPE") {
		t.Fatalf("Metrics: %.200s, %v", m, err)
	}
	doc, err := c.OpenAPI(ctx)
	if err != nil || !strings.HasPrefix(string(doc), "openapi:") {
		t.Fatalf("OpenAPI: %.100s, %v", doc, err)
	}
}

// TestClient_keys: a server with keys answers a client without one 401,
// one with the application key 403 on an admin route, and serves it
// elsewhere.
func TestClient_keys(t *testing.T) {
	a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = testAppKey, testAdminKey })
	ctx := context.Background()
	_, err := client.New(a.URL).Stats(ctx, 0)
	wantCode(t, "no key", err, 401, api.CodeUnauthorized)
	app := client.New(a.URL, client.WithKey(testAppKey))
	if _, err := app.Stats(ctx, 0); err != nil {
		t.Fatal(err)
	}
	_, err = app.Jobs(ctx, 0)
	wantCode(t, "app key on an admin route", err, 403, api.CodeForbidden)
	if _, err := client.New(a.URL, client.WithKey(testAdminKey)).Jobs(ctx, 0); err != nil {
		t.Fatal(err)
	}
}
