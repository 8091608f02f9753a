package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// testContractOnline: recommendation ids, attribution, the online report
// and experiments, with every bad input the routes refuse.
func testContractOnline(t *testing.T) {
	s := startKNNServer(t, contractEvents(60, 30, 8))

	var rec api.RecommendationsOut
	s.do(t, contractCase{method: "GET", path: "/users/u0/recommendations?n=5", want: 200}).decode(t, &rec)
	if rec.RecommendationID == "" || len(rec.Items) != 5 || rec.Experiment != "" {
		t.Fatalf("recommendations = %+v, want 5 items and a recommendation_id, no experiment", rec)
	}
	post := func(name, body string, want int) api.InteractionsOut {
		t.Helper()
		var out api.InteractionsOut
		if a := s.do(t, contractCase{name: name, method: "POST", path: "/interactions", body: body, want: want}); a.status == 201 {
			a.decode(t, &out)
		}
		return out
	}
	ev := func(item, typ, rid string) string {
		return fmt.Sprintf(`{"user_id":"u0","item_id":%q,"type":%q,"recommendation_id":%q}`, item, typ, rid)
	}
	if out := post("purchase of item 2", ev(rec.Items[1].ItemID, "purchase", rec.RecommendationID), 201); out.Attributed != 1 {
		t.Errorf("a purchase with the recommendation_id: %+v, want attributed 1", out)
	}
	if out := post("again", ev(rec.Items[1].ItemID, "click", rec.RecommendationID), 201); out.Attributed != 0 {
		t.Errorf("a second event on the same shown item: %+v, want attributed 0", out)
	}
	if out := post("by window", `{"interactions":[{"user_id":"u0","item_id":"`+rec.Items[3].ItemID+`"},{"user_id":"u0","item_id":"not-shown"}]}`, 201); out.Attributed != 1 {
		t.Errorf("a view of item 4 without the id, and one of an item not shown: %+v, want attributed 1", out)
	}
	if out := post("dislike", ev(rec.Items[4].ItemID, "dislike", rec.RecommendationID), 201); out.Attributed != 0 {
		t.Errorf("a dislike is not positive: %+v, want attributed 0", out)
	}
	if out := post("unknown id", ev(rec.Items[0].ItemID, "click", "r-never-issued"), 201); out.Attributed != 0 {
		t.Errorf("an id never issued: %+v, want attributed 0", out)
	}
	s.do(t, contractCase{name: "id too long", method: "POST", path: "/interactions", body: ev("i1", "click", strings.Repeat("r", 65)),
		want: 400, invalid: true, field: "recommendation_id"})
	s.do(t, contractCase{name: "id with a control character", method: "POST", path: "/interactions",
		body: `{"interactions":[{"user_id":"u0","item_id":"i1","recommendation_id":"r\t1"}]}`, want: 400, invalid: true,
		field: "interactions[0].recommendation_id"})

	var rep api.OnlineReportOut
	s.do(t, contractCase{method: "GET", path: "/admin/online", want: 200}).decode(t, &rep)
	if len(rep.Totals) != 1 || len(rep.Days) != 1 {
		t.Fatalf("online report = %+v, want one model on one day", rep)
	}
	if got := rep.Totals[0]; got.Model != "itemknn" || got.Lists != 1 || got.Impressions != 5 || got.Clicks != 2 || got.Conversions != 1 ||
		got.CTR.Rate != 0.4 || got.Conversion.Rate != 0.2 || !(got.CTR.Low < 0.4 && got.CTR.High > 0.4) {
		t.Errorf("itemknn totals = %+v, want 1 list, 5 shown, 2 clicks, 1 conversion", got)
	}
	for _, ex := range []contractCase{
		{name: "report of a range", method: "GET", path: "/admin/online?from=2020-01-01&to=2020-12-31&model=itemknn", want: 200},
		{name: "report bad from", method: "GET", path: "/admin/online?from=2026-13-01", want: 400, invalid: true, field: "from"},
		{name: "report bad to", method: "GET", path: "/admin/online?to=yesterday", want: 400, invalid: true, field: "to"},
		{name: "report from after to", method: "GET", path: "/admin/online?from=2026-02-02&to=2026-02-01", want: 400, field: "from"},
		{name: "report too long", method: "GET", path: "/admin/online?from=2020-01-01&to=2026-01-01", want: 400, field: "from"},
		{name: "report unknown model", method: "GET", path: "/admin/online?model=nope", want: 400, field: "model"},
		{name: "no experiments", method: "GET", path: "/admin/experiments", want: 200},
		{name: "unknown experiment", method: "GET", path: "/admin/experiments/x000009", want: 404},
		{name: "bad experiment id", method: "GET", path: "/admin/experiments/%20", want: 400, invalid: true, field: "id"},
		{name: "stop unknown", method: "POST", path: "/admin/experiments/x000009/stop", want: 404},
		{name: "stop bad id", method: "POST", path: "/admin/experiments/%7F/stop", want: 400, invalid: true, field: "id"},
		{name: "empty arms", method: "POST", path: "/admin/experiments", body: `{"name":"e","arms":[]}`, want: 400, field: "arms"},
		{name: "no arms", method: "POST", path: "/admin/experiments", body: `{"name":"e"}`, want: 400, invalid: true, field: "arms"},
		{name: "one arm", method: "POST", path: "/admin/experiments", body: `{"name":"e","arms":[{"model":"popular","share":100}]}`, want: 400, field: "arms"},
		{name: "shares not 100", method: "POST", path: "/admin/experiments", body: `{"name":"e","arms":[{"model":"popular","share":50},{"model":"itemknn","share":40}]}`, want: 400, field: "arms"},
		{name: "share 0", method: "POST", path: "/admin/experiments", body: `{"name":"e","arms":[{"model":"popular","share":0},{"model":"itemknn","share":100}]}`, want: 400, field: "arms[0].share"},
		{name: "unknown model", method: "POST", path: "/admin/experiments", body: `{"name":"e","arms":[{"model":"popular","share":50},{"model":"nope","share":50}]}`, want: 400, field: "arms[1].model"},
		{name: "untrained model", method: "POST", path: "/admin/experiments", body: `{"name":"e","arms":[{"model":"popular","share":50},{"model":"ease","share":50}]}`, want: 400, field: "arms[1].model"},
		{name: "repeated model", method: "POST", path: "/admin/experiments", body: `{"name":"e","arms":[{"model":"itemknn","share":50},{"model":"itemknn","share":50}]}`, want: 400, field: "arms[1].model"},
		{name: "no name", method: "POST", path: "/admin/experiments", body: `{"arms":[{"model":"popular","share":50},{"model":"itemknn","share":50}]}`, want: 400, invalid: true, field: "name"},
		{name: "bad alpha", method: "POST", path: "/admin/experiments", body: `{"name":"e","alpha":0.9,"arms":[{"model":"popular","share":50},{"model":"itemknn","share":50}]}`, want: 400, field: "alpha"},
		{name: "not json", method: "POST", path: "/admin/experiments", body: `{}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "not json (xml)", method: "POST", path: "/admin/experiments", body: `{}`, ctype: "application/xml", want: 415, invalid: true},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}

	body := `{"name":"knn-vs-popular","arms":[{"model":"popular","share":50},{"model":"itemknn","share":50}],"min_impressions":10}`
	a := s.do(t, contractCase{name: "create", method: "POST", path: "/admin/experiments", body: body, want: 201})
	var exp api.ExperimentOut
	a.decode(t, &exp)
	if exp.ID != "x000001" || exp.State != "running" || len(exp.Arms) != 2 || a.header.Get("Location") != "/admin/experiments/x000001" {
		t.Fatalf("created %+v (Location %q)", exp, a.header.Get("Location"))
	}
	s.do(t, contractCase{name: "a second experiment", method: "POST", path: "/admin/experiments", body: body, want: 409})
	arms := map[string]bool{}
	for u := range 20 {
		var r api.RecommendationsOut
		s.do(t, contractCase{method: "GET", path: fmt.Sprintf("/users/u%d/recommendations", u), want: 200}).decode(t, &r)
		if r.Experiment != "x000001" || (r.Arm != "popular" && r.Arm != "itemknn") || r.Model != r.Arm {
			t.Fatalf("u%d in the experiment: %+v", u, r)
		}
		arms[r.Arm] = true
	}
	if len(arms) != 2 {
		t.Errorf("20 users fell in the arms %v, want both", arms)
	}
	s.do(t, contractCase{name: "explicit model", method: "GET", path: "/users/u1/recommendations?model=popular", want: 200}).decode(t, &rec)
	if rec.Experiment != "" || rec.Model != "popular" {
		t.Errorf("a request naming its model is not in the experiment: %+v", rec)
	}
	s.do(t, contractCase{name: "list", method: "GET", path: "/admin/experiments", want: 200})
	s.do(t, contractCase{name: "get", method: "GET", path: "/admin/experiments/x000001", want: 200}).decode(t, &exp)
	if exp.Arms[0].Lists+exp.Arms[1].Lists != 20 {
		t.Errorf("arms = %+v, want the 20 lists shown", exp.Arms)
	}
	s.do(t, contractCase{name: "stop", method: "POST", path: "/admin/experiments/x000001/stop", want: 200}).decode(t, &exp)
	if exp.State != "stopped" || exp.StoppedAt == nil {
		t.Errorf("stopped = %+v", exp)
	}
	s.do(t, contractCase{name: "stop again", method: "POST", path: "/admin/experiments/x000001/stop", want: 200})
	s.do(t, contractCase{method: "GET", path: "/users/u2/recommendations", want: 200}).decode(t, &rec)
	if rec.Experiment != "" || rec.Model != "itemknn" {
		t.Errorf("after the stop: %+v, want the active model and no experiment", rec)
	}
	s.do(t, contractCase{name: "the next one", method: "POST", path: "/admin/experiments", body: body, want: 201})
}

// testContractOnlinePlacements: GET /admin/online counts the lists of each
// placement apart, by the placement of the list an event is credited to,
// beside the per-model rows; model narrows both.
func testContractOnlinePlacements(t *testing.T) {
	s := startKNNServer(t, contractEvents(60, 30, 8))
	s.do(t, contractCase{method: "PUT", path: "/admin/placements/home", body: `{"n":4}`, want: 201})

	var home, plain, anon api.RecommendationsOut
	s.do(t, contractCase{method: "GET", path: "/users/u0/recommendations?n=5&placement=home", want: 200}).decode(t, &home)
	s.do(t, contractCase{method: "GET", path: "/users/u1/recommendations?n=4", want: 200}).decode(t, &plain)
	s.do(t, contractCase{method: "POST", path: "/recommendations", body: `{"items":["i1","i2"],"n":3,"placement":"home"}`, want: 200}).decode(t, &anon)
	if len(home.Items) != 5 || home.Placement != "home" || len(plain.Items) != 4 || plain.Placement != "" || len(anon.Items) != 3 || anon.Placement != "home" {
		t.Fatalf("answers: home %d items (%q), plain %d (%q), anonymous %d (%q); want 5, 4 and 3",
			len(home.Items), home.Placement, len(plain.Items), plain.Placement, len(anon.Items), anon.Placement)
	}
	ev := func(user, item, typ, rid string) string {
		return fmt.Sprintf(`{"user_id":%q,"item_id":%q,"type":%q,"recommendation_id":%q}`, user, item, typ, rid)
	}
	for _, e := range []string{
		ev("u0", home.Items[0].ItemID, "click", home.RecommendationID),
		ev("u0", home.Items[2].ItemID, "purchase", home.RecommendationID),
		ev("u0", home.Items[2].ItemID, "click", home.RecommendationID), // credited already
		ev("u1", plain.Items[1].ItemID, "click", plain.RecommendationID),
		ev("u7", anon.Items[0].ItemID, "click", anon.RecommendationID),
	} {
		s.do(t, contractCase{method: "POST", path: "/interactions", body: e, want: 201})
	}

	// By hand: home showed 5 + 3 items, 3 clicked (one bought); without a
	// placement 4 shown, 1 clicked.
	var rep api.OnlineReportOut
	s.do(t, contractCase{method: "GET", path: "/admin/online", want: 200}).decode(t, &rep)
	if len(rep.Placements) != 2 {
		t.Fatalf("placements = %+v, want none and home", rep.Placements)
	}
	none, hm := rep.Placements[0], rep.Placements[1]
	if none.Placement != "" || none.Lists != 1 || none.Impressions != 4 || none.Clicks != 1 || none.Conversions != 0 || none.CTR.Rate != 1.0/4 {
		t.Errorf("no placement = %+v, want 1 list, 4 shown, 1 click, CTR 0.25", none)
	}
	if hm.Placement != "home" || hm.Lists != 2 || hm.Impressions != 8 || hm.Clicks != 3 || hm.Conversions != 1 ||
		hm.CTR.Rate != 3.0/8 || hm.Conversion.Rate != 1.0/8 || !(hm.CTR.Low < 3.0/8 && hm.CTR.High > 3.0/8) {
		t.Errorf("home = %+v, want 2 lists, 8 shown, 3 clicks, 1 conversion, CTR 0.375", hm)
	}
	if len(rep.Totals) != 1 || rep.Totals[0].Lists != 3 || rep.Totals[0].Impressions != 12 || rep.Totals[0].Clicks != 4 {
		t.Errorf("model totals = %+v, want itemknn's 3 lists, 12 shown, 4 clicks", rep.Totals)
	}
	s.do(t, contractCase{method: "GET", path: "/admin/online?model=popular", want: 200}).decode(t, &rep)
	if rep.Placements == nil || len(rep.Placements) != 0 || len(rep.Totals) != 0 {
		t.Errorf("report of popular, which answered nothing: placements %+v, totals %+v; want both empty", rep.Placements, rep.Totals)
	}
}

// testContractOnlineStoreFailure: with the store closed after a model is
// trained, starting an experiment passes validation and fails in the
// store: 500 (the closed-store scenario cannot reach the store, having
// no trained model to validate the arms against).
func testContractOnlineStoreFailure(t *testing.T) {
	s := startKNNServer(t, contractEvents(30, 15, 6))
	if err := s.app.store.Close(); err != nil {
		t.Fatal(err)
	}
	s.do(t, contractCase{method: "POST", path: "/admin/experiments",
		body: `{"name":"e","arms":[{"model":"popular","share":50},{"model":"itemknn","share":50}]}`, want: 500})
}

// startKNNServer starts a contract server, posts events and trains itemknn.
func startKNNServer(t *testing.T, events string) *contractServer {
	t.Helper()
	s := startContractServer(t, nil)
	s.do(t, contractCase{method: "POST", path: "/interactions", body: events, want: 201})
	id := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["itemknn"]}`})
	if j := s.waitJob(t, id); j.State != api.JobSucceeded {
		t.Fatalf("training itemknn: %+v", j)
	}
	return s
}
