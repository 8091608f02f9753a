package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// testContractTrainedModel checks the answers of a server with a model
// trained by POST /admin/retrain: recommendations from it, and similar items.
func testContractTrainedModel(t *testing.T) {
	s := startContractServer(t, nil)
	var events []string
	for u := range 6 {
		for i := range 5 {
			if (u+i)%3 != 0 {
				events = append(events, fmt.Sprintf(`{"user_id":"u%d","item_id":"i%d"}`, u, i))
			}
		}
	}
	s.do(t, contractCase{method: "POST", path: "/interactions", body: `{"interactions":[` + strings.Join(events, ",") + `]}`, want: 201})
	s.do(t, contractCase{method: "PUT", path: "/items/i1", body: `{"categories":["c"]}`, want: 200})
	s.do(t, contractCase{name: "not ready", method: "GET", path: "/readyz", want: 503})
	id := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["itemknn"]}`})
	if j := s.waitJob(t, id); j.State != api.JobSucceeded {
		t.Fatalf("training itemknn: %+v", j)
	}

	for _, ex := range []contractCase{
		{name: "ready", method: "GET", path: "/readyz", want: 200},
		{name: "recommendations", method: "GET", path: "/users/u0/recommendations", want: 200},
		{name: "recommendations with consumed", method: "GET", path: "/users/u0/recommendations?exclude_consumed=false&n=3", want: 200},
		{name: "recommendations by popularity", method: "GET", path: "/users/u0/recommendations?model=popular", want: 200},
		{name: "recommendations explained", method: "GET", path: "/users/u0/recommendations?explain=true&n=3", want: 200},
		{name: "recommendations explain word", method: "GET", path: "/users/u0/recommendations?explain=please", want: 400, invalid: true, field: "explain"},
		{name: "similar", method: "GET", path: "/items/i1/similar", want: 200},
		{name: "similar n 1", method: "GET", path: "/items/i1/similar?n=1&by=collaborative", want: 200},
		{name: "similar by content", method: "GET", path: "/items/i1/similar?by=content", want: 503},
		{name: "similar by hybrid", method: "GET", path: "/items/i1/similar?by=hybrid", want: 200},
		{name: "search without a content metric", method: "POST", path: "/search/similar", body: `{"features":[1,0]}`, want: 503},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	t.Run("recommendations content", func(t *testing.T) {
		var rec api.RecommendationsOut
		s.do(t, contractCase{method: "GET", path: "/users/u0/recommendations", want: 200}).decode(t, &rec)
		if rec.Model != "itemknn" || rec.ModelVersion == "" || rec.Fallback != "" {
			t.Errorf("got model %q version %q fallback %q, want itemknn, a version, no fallback", rec.Model, rec.ModelVersion, rec.Fallback)
		}
		var sim api.SimilarOut
		s.do(t, contractCase{method: "GET", path: "/items/i1/similar", want: 200}).decode(t, &sim)
		if sim.ItemID != "i1" || sim.By != "collaborative" || len(sim.Items) == 0 {
			t.Errorf("similar = %+v, want collaborative neighbours of i1", sim)
		}
	})
}

// testContractContentModel trains a content metric (items with features
// and collaborative neighbours) and exercises the routes that use it.
func testContractContentModel(t *testing.T) {
	s := startContractServer(t, nil)
	s.do(t, contractCase{method: "POST", path: "/interactions", body: contractEvents(60, 30, 8), want: 201})
	var items []string
	for i := range 30 {
		items = append(items, fmt.Sprintf(`{"id":"i%d","features":{"a":%d,"b":%d,"c":%g}}`, i, i%3, (i+1)%3, float64(i)/30))
	}
	s.do(t, contractCase{method: "POST", path: "/items", body: `{"items":[` + strings.Join(items, ",") + `]}`, want: 201})
	id := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["itemknn","content"]}`})
	if j := s.waitJob(t, id); j.State != api.JobSucceeded || !strings.Contains(strings.Join(j.Versions, ","), "content@") {
		t.Fatalf("training: %+v, want an itemknn and a content version", j)
	}
	for _, ex := range []contractCase{
		{name: "similar by content", method: "GET", path: "/items/i1/similar?by=content&n=3", want: 200},
		{name: "similar by hybrid", method: "GET", path: "/items/i1/similar?by=hybrid&n=3", want: 200},
		{name: "search by object", method: "POST", path: "/search/similar", body: `{"features":{"a":1,"b":2},"n":3}`, want: 200},
		{name: "search default n", method: "POST", path: "/search/similar", body: `{"features":{"c":0.5}}`, want: 200},
		{name: "search unknown features", method: "POST", path: "/search/similar", body: `{"features":{"zzz":1}}`, want: 400, field: "features"},
		{name: "search no features", method: "POST", path: "/search/similar", body: `{"n":3}`, want: 400, invalid: true, field: "features"},
		{name: "search n 0", method: "POST", path: "/search/similar", body: `{"features":[1],"n":0}`, want: 400, invalid: true, field: "n"},
		{name: "search not json", method: "POST", path: "/search/similar", body: `{}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "search not json (xml)", method: "POST", path: "/search/similar", body: `{}`, ctype: "application/xml", want: 415, invalid: true},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	t.Run("search answers items of the catalogue", func(t *testing.T) {
		var out api.SearchOut
		s.do(t, contractCase{method: "POST", path: "/search/similar", body: `{"features":{"a":1,"b":2,"c":0.1},"n":3}`, want: 200}).decode(t, &out)
		if len(out.Items) != 3 || out.Model != "content" {
			t.Fatalf("search = %+v, want 3 items from the content model", out)
		}
	})
}
