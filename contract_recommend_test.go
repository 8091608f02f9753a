package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// shapesData is 40 users over 40 items (i0–i39, item i in category
// c{i%3}, i7 hidden), 8 positive views each: every user has more than 20
// recommendable items, with many ties.
func shapesData(t *testing.T, s *contractServer) {
	t.Helper()
	var events, items []string
	for u := range 40 {
		for k := range 8 {
			events = append(events, fmt.Sprintf(`{"user_id":"u%d","item_id":"i%d"}`, u, (u*u+3*k*u+5*k)%40))
		}
	}
	for i := range 40 {
		items = append(items, fmt.Sprintf(`{"id":"i%d","categories":["c%d"],"hidden":%v}`, i, i%3, i == 7))
	}
	s.do(t, contractCase{method: "POST", path: "/interactions", body: `{"interactions":[` + strings.Join(events, ",") + `]}`, want: 201})
	s.do(t, contractCase{method: "POST", path: "/items", body: `{"items":[` + strings.Join(items, ",") + `]}`, want: 201})
}

func (s *contractServer) recommendations(t *testing.T, ex contractCase) api.RecommendationsOut {
	t.Helper()
	if ex.want == 0 {
		ex.want = 200
	}
	if ex.method == "" {
		ex.method = "GET"
	}
	var rec api.RecommendationsOut
	if a := s.do(t, ex); a.status == 200 {
		a.decode(t, &rec)
	} else {
		t.FailNow()
	}
	return rec
}

func itemIDs(items []api.ScoredItem) []string {
	out := make([]string, len(items))
	for k, it := range items {
		out[k] = it.ItemID
	}
	return out
}

func sameScored(a, b []api.ScoredItem) bool {
	return slices.EqualFunc(a, b, func(x, y api.ScoredItem) bool { return x.ItemID == y.ItemID && x.Score == y.Score && x.Cold == y.Cold })
}

func jsonBody(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// testContractRecommendShapes checks paging, exclusion and categories of
// GET /users/{id}/recommendations, POST /recommendations and POST
// /users/{id}/rerank on a server with trained models.
func testContractRecommendShapes(t *testing.T) {
	s := startContractServer(t, nil)
	shapesData(t, s)
	id := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["itemknn","ease"]}`})
	if j := s.waitJob(t, id); j.State != api.JobSucceeded {
		t.Fatalf("training: %+v", j)
	}
	users := []string{"u0", "u1", "u2", "u13", "u27"}

	t.Run("page 2 is items 11-20", func(t *testing.T) {
		for _, m := range []string{"itemknn", "ease", "popular"} {
			for _, u := range append(users, "nobody") {
				full := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=20&model=" + m})
				page := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=10&offset=10&model=" + m})
				if len(full.Items) != 20 || !sameScored(page.Items, full.Items[10:]) {
					t.Errorf("%s %s: page 2 %v, want %v", m, u, itemIDs(page.Items), itemIDs(full.Items[10:]))
				}
			}
		}
	})

	t.Run("exclude", func(t *testing.T) {
		for _, u := range users {
			base := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=20"})
			ex := []string{base.Items[0].ItemID, base.Items[2].ItemID, base.Items[5].ItemID}
			got := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?exclude=" + ex[0] + "," + ex[1] + "&exclude=" + ex[2] + "&exclude=ghost"})
			want := slices.DeleteFunc(slices.Clone(base.Items), func(it api.ScoredItem) bool { return slices.Contains(ex, it.ItemID) })[:10]
			if len(got.Items) != 10 || !sameScored(got.Items, want) {
				t.Errorf("%s excluding %v: %v, want %v", u, ex, itemIDs(got.Items), itemIDs(want))
			}
		}
	})

	t.Run("similar exclude", func(t *testing.T) {
		for _, it := range []string{"i1", "i2", "i10"} {
			var long, got api.SimilarOut
			s.do(t, contractCase{method: "GET", path: "/items/" + it + "/similar?n=12", want: 200}).decode(t, &long)
			if len(long.Items) < 12 {
				t.Fatalf("%s has %d neighbours, want 12", it, len(long.Items))
			}
			ex := []string{long.Items[0].ItemID, long.Items[4].ItemID}
			s.do(t, contractCase{method: "GET", path: "/items/" + it + "/similar?n=10&exclude=" + ex[0] + "," + ex[1] + ",ghost", want: 200}).decode(t, &got)
			want := slices.DeleteFunc(slices.Clone(long.Items), func(s api.ScoredItem) bool { return slices.Contains(ex, s.ItemID) })[:10]
			if !sameScored(got.Items, want) {
				t.Errorf("%s excluding %v: %v, want %v", it, ex, itemIDs(got.Items), itemIDs(want))
			}
		}
	})

	t.Run("categories any", func(t *testing.T) {
		for _, u := range users {
			all := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=1000"})
			got := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?category=c0&category=c2&n=8"})
			var want []api.ScoredItem
			for _, it := range all.Items {
				var i int
				fmt.Sscanf(it.ItemID, "i%d", &i)
				if i%3 != 1 && len(want) < 8 {
					want = append(want, it)
				}
			}
			if len(got.Items) != 8 || !sameScored(got.Items, want) {
				t.Errorf("%s c0|c2: %v, want %v", u, itemIDs(got.Items), itemIDs(want))
			}
		}
	})

	t.Run("history equals the user", func(t *testing.T) {
		for _, u := range users {
			var hist api.HistoryOut
			s.do(t, contractCase{method: "GET", path: "/users/" + u + "/interactions?limit=1000", want: 200}).decode(t, &hist)
			items := []string{"ghost"}
			for _, e := range hist.Interactions {
				items = append(items, e.ItemID)
			}
			for _, m := range []string{"itemknn", "ease"} {
				for _, q := range []string{"n=15", "n=5&offset=5&category=c1&category=c2&exclude=i3,i4&exclude_consumed=false&explain=true"} {
					want := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?model=" + m + "&" + q})
					v, _ := url.ParseQuery(q)
					body := map[string]any{"items": items, "model": m}
					if c := v["category"]; c != nil {
						body["category"] = c
					}
					for _, k := range []string{"n", "offset"} {
						if v.Get(k) != "" {
							var x int
							fmt.Sscanf(v.Get(k), "%d", &x)
							body[k] = x
						}
					}
					if v.Get("exclude") != "" {
						body["exclude"] = strings.Split(v.Get("exclude"), ",")
						body["exclude_consumed"], body["explain"] = false, true
					}
					got := s.recommendations(t, contractCase{method: "POST", path: "/recommendations", body: jsonBody(t, body)})
					if !sameScored(got.Items, want.Items) || got.Model != m || got.UserID != "" || !slices.Equal(got.UnknownItems, []string{"ghost"}) {
						t.Errorf("%s, history of %s (%s): %+v\nwant items %v", m, u, q, got, itemIDs(want.Items))
					}
				}
			}
		}
	})

	t.Run("rerank follows the scores", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, m := range []string{"itemknn", "ease"} {
			for _, u := range append(users, "nobody") {
				list := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=30&exclude_consumed=false&model=" + m})
				var want []api.ScoredItem
				for k, it := range list.Items {
					if k%2 == 0 {
						want = append(want, it)
					}
				}
				cand := itemIDs(want)
				rng.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
				cand = append(cand, "ghost", cand[0], "i7")
				got := s.recommendations(t, contractCase{method: "POST", path: "/users/" + u + "/rerank", body: jsonBody(t, map[string]any{"items": cand, "model": m})})
				if !sameScored(got.Items, want) || got.UserID != u || got.Fallback != list.Fallback ||
					!slices.Equal(got.UnknownItems, []string{"ghost"}) || !slices.Equal(got.HiddenItems, []string{"i7"}) {
					t.Errorf("%s %s: rerank %+v\nwant items %v", m, u, got, want)
				}
			}
		}
	})

	many := func(n int) string {
		ids := make([]string, n)
		for k := range ids {
			ids[k] = fmt.Sprintf("x%d", k)
		}
		return jsonBody(t, ids)
	}
	for _, ex := range []contractCase{
		{name: "post 10000 items", method: "POST", path: "/recommendations", body: `{"items":` + many(10000) + `}`, want: 200},
		{name: "post 10001 items", method: "POST", path: "/recommendations", body: `{"items":` + many(10001) + `}`, want: 400, invalid: true, field: "items"},
		{name: "post no items", method: "POST", path: "/recommendations", body: `{"items":[]}`, want: 400, invalid: true, field: "items"},
		{name: "post items missing", method: "POST", path: "/recommendations", body: `{"n":3}`, want: 400, invalid: true, field: "items"},
		{name: "post bad item id", method: "POST", path: "/recommendations", body: `{"items":["a",""]}`, want: 400, invalid: true, field: "items[1]"},
		{name: "post unknown model", method: "POST", path: "/recommendations", body: `{"items":["i1"],"model":"nope"}`, want: 400, field: "model"},
		{name: "post content model", method: "POST", path: "/recommendations", body: `{"items":["i1"],"model":"content"}`, want: 400, field: "model"},
		{name: "post untrained model", method: "POST", path: "/recommendations", body: `{"items":["i1"],"model":"slim"}`, want: 503},
		{name: "post n 0", method: "POST", path: "/recommendations", body: `{"items":["i1"],"n":0}`, want: 400, invalid: true, field: "n"},
		{name: "post n 1001", method: "POST", path: "/recommendations", body: `{"items":["i1"],"n":1001}`, want: 400, invalid: true, field: "n"},
		{name: "post offset -1", method: "POST", path: "/recommendations", body: `{"items":["i1"],"offset":-1}`, want: 400, invalid: true, field: "offset"},
		{name: "post offset past max-n", method: "POST", path: "/recommendations", body: `{"items":["i1"],"offset":995,"n":10}`, want: 400, field: "offset"},
		{name: "post category array", method: "POST", path: "/recommendations", body: `{"items":["i1"],"category":["c0","c1"]}`, want: 200},
		{name: "post category string", method: "POST", path: "/recommendations", body: `{"items":["i1"],"category":"c0"}`, want: 200},
		{name: "post category number", method: "POST", path: "/recommendations", body: `{"items":["i1"],"category":3}`, want: 400, invalid: true, field: "category"},
		{name: "post empty category", method: "POST", path: "/recommendations", body: `{"items":["i1"],"category":[""]}`, want: 400, invalid: true, field: "category[0]"},
		{name: "post unknown field", method: "POST", path: "/recommendations", body: `{"items":["i1"],"user_id":"u0"}`, want: 400, invalid: true, field: "user_id"},
		{name: "post text/plain", method: "POST", path: "/recommendations", body: `{"items":["i1"]}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "post xml", method: "POST", path: "/recommendations", body: `{"items":["i1"]}`, ctype: "application/xml", want: 415, invalid: true},
		{name: "get offset", method: "GET", path: "/users/u0/recommendations?offset=990&n=10", want: 200},
		{name: "get offset past max-n", method: "GET", path: "/users/u0/recommendations?offset=991&n=10", want: 400, field: "offset"},
		{name: "get offset 1000", method: "GET", path: "/users/u0/recommendations?offset=1000", want: 400, invalid: true, field: "offset"},
		{name: "get offset word", method: "GET", path: "/users/u0/recommendations?offset=two", want: 400, invalid: true, field: "offset"},
		{name: "get offset negative", method: "GET", path: "/users/u0/recommendations?offset=-1", want: 400, invalid: true, field: "offset"},
		{name: "get exclude bad id", method: "GET", path: "/users/u0/recommendations?exclude=a,%01", want: 400, field: "exclude"},
		{name: "get content model", method: "GET", path: "/users/u0/recommendations?model=content", want: 400, field: "model"},
		{name: "rerank 10000 items", method: "POST", path: "/users/u0/rerank", body: `{"items":` + many(10000) + `}`, want: 200},
		{name: "rerank 10001 items", method: "POST", path: "/users/u0/rerank", body: `{"items":` + many(10001) + `}`, want: 400, invalid: true, field: "items"},
		{name: "rerank no items", method: "POST", path: "/users/u0/rerank", body: `{"items":[]}`, want: 400, invalid: true, field: "items"},
		{name: "rerank unknown model", method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"],"model":"nope"}`, want: 400, field: "model"},
		{name: "rerank untrained model", method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"],"model":"slim"}`, want: 503},
		{name: "rerank bad user id", method: "POST", path: "/users/%7F/rerank", body: `{"items":["i1"]}`, want: 400, invalid: true, field: "id"},
		{name: "rerank text/plain", method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"]}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "rerank xml", method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"]}`, ctype: "application/xml", want: 415, invalid: true},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	t.Run("unknown model lists the models", func(t *testing.T) {
		for _, ex := range []contractCase{
			{method: "POST", path: "/recommendations", body: `{"items":["i1"],"model":"nope"}`, want: 400},
			{method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"],"model":"nope"}`, want: 400},
		} {
			var e api.ErrorOut
			s.do(t, ex).decode(t, &e)
			if !strings.Contains(e.Error.Message, `"nope"`) || !strings.Contains(e.Error.Message, "itemknn, userknn") {
				t.Errorf("%s: %q does not name the model and the known ones", ex.path, e.Error.Message)
			}
		}
	})
	t.Run("unknown user rerank is popularity", func(t *testing.T) {
		got := s.recommendations(t, contractCase{method: "POST", path: "/users/nobody/rerank", body: `{"items":["i1","i2","i0"]}`})
		pop := s.recommendations(t, contractCase{path: "/users/nobody/recommendations?n=1000"})
		var want []string
		for _, it := range pop.Items {
			if it.ItemID == "i0" || it.ItemID == "i1" || it.ItemID == "i2" {
				want = append(want, it.ItemID)
			}
		}
		if got.Fallback != "popular" || !slices.Equal(itemIDs(got.Items), want) {
			t.Errorf("rerank for an unknown user: %+v, want %v by popularity", got, want)
		}
	})
}
