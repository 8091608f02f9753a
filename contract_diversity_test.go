package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// shapesCat is the category of item iN of shapesData: c{N%3}.
func shapesCat(id string) string {
	var i int
	fmt.Sscanf(id, "i%d", &i)
	return fmt.Sprintf("c%d", i%3)
}

// capped walks list with a cap of k items per category of shapesData,
// up to n items.
func capped(list []api.ScoredItem, k, n int) []api.ScoredItem {
	count := map[string]int{}
	var out []api.ScoredItem
	for _, it := range list {
		if len(out) < n && count[shapesCat(it.ItemID)] < k {
			count[shapesCat(it.ItemID)]++
			out = append(out, it)
		}
	}
	return out
}

// testContractDiversity checks max_per_category and diversity on every
// ranked answer: GET /users/{id}/recommendations, POST /recommendations,
// POST /users/{id}/rerank and GET /items/{id}/similar, their interplay
// with paging and exclude, and the 400 naming the parameter for a bad
// value.
func testContractDiversity(t *testing.T) {
	s := startContractServer(t, nil)
	shapesData(t, s)
	id := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["itemknn"]}`})
	if j := s.waitJob(t, id); j.State != api.JobSucceeded {
		t.Fatalf("training: %+v", j)
	}
	users := []string{"u0", "u1", "u13", "nobody"}

	t.Run("max_per_category with pages and exclude", func(t *testing.T) {
		for _, u := range users {
			all := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=1000"})
			want := capped(all.Items, 2, 6)
			got := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=6&max_per_category=2"})
			if len(got.Items) != 6 || !sameScored(got.Items, want) {
				t.Errorf("%s: %v, want %v", u, itemIDs(got.Items), itemIDs(want))
			}
			page := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=2&offset=4&max_per_category=2"})
			if !sameScored(page.Items, want[4:]) {
				t.Errorf("%s: page %v, want %v", u, itemIDs(page.Items), itemIDs(want[4:]))
			}
			ex := want[1].ItemID
			got = s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=6&max_per_category=2&exclude=" + ex})
			rest := slices.DeleteFunc(slices.Clone(all.Items), func(it api.ScoredItem) bool { return it.ItemID == ex })
			if w := capped(rest, 2, 6); len(got.Items) != 6 || !sameScored(got.Items, w) {
				t.Errorf("%s excluding %s: %v, want %v", u, ex, itemIDs(got.Items), itemIDs(w))
			}
		}
	})

	t.Run("diversity keeps n and pages", func(t *testing.T) {
		for _, u := range users {
			base := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=10"})
			one := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=10&diversity=1"})
			if !sameScored(one.Items, base.Items) {
				t.Errorf("%s: diversity=1 %v, want the model's %v", u, itemIDs(one.Items), itemIDs(base.Items))
			}
			full := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=10&diversity=0.2&max_per_category=4"})
			page := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=5&offset=5&diversity=0.2&max_per_category=4"})
			if len(full.Items) != 10 || !sameScored(page.Items, full.Items[5:]) {
				t.Errorf("%s: page %v, want the last 5 of %v", u, itemIDs(page.Items), itemIDs(full.Items))
			}
			if c := capped(full.Items, 4, 10); len(c) != 10 {
				t.Errorf("%s: %v breaks the cap of 4", u, itemIDs(full.Items))
			}
		}
	})

	t.Run("POST recommendations and rerank", func(t *testing.T) {
		for _, u := range users[:3] {
			var hist api.HistoryOut
			s.do(t, contractCase{method: "GET", path: "/users/" + u + "/interactions?limit=1000", want: 200}).decode(t, &hist)
			var items []string
			for _, e := range hist.Interactions {
				items = append(items, e.ItemID)
			}
			want := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=5&max_per_category=1&diversity=0.5"})
			got := s.recommendations(t, contractCase{method: "POST", path: "/recommendations",
				body: jsonBody(t, map[string]any{"items": items, "n": 5, "max_per_category": 1, "diversity": 0.5})})
			if !sameScored(got.Items, want.Items) || len(got.Items) != 3 {
				t.Errorf("%s: POST %v, want GET's %v", u, itemIDs(got.Items), itemIDs(want.Items))
			}
			list := s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?n=20"})
			cand := itemIDs(list.Items)
			got = s.recommendations(t, contractCase{method: "POST", path: "/users/" + u + "/rerank",
				body: jsonBody(t, map[string]any{"items": cand, "max_per_category": 2})})
			if w := capped(list.Items, 2, 20); !sameScored(got.Items, w) {
				t.Errorf("%s: rerank %v, want %v", u, itemIDs(got.Items), itemIDs(w))
			}
		}
	})

	t.Run("similar", func(t *testing.T) {
		for _, it := range []string{"i1", "i2", "i10"} {
			var long, got api.SimilarOut
			s.do(t, contractCase{method: "GET", path: "/items/" + it + "/similar?n=40", want: 200}).decode(t, &long)
			s.do(t, contractCase{method: "GET", path: "/items/" + it + "/similar?n=3&max_per_category=1", want: 200}).decode(t, &got)
			if w := capped(long.Items, 1, 3); len(got.Items) != 3 || !sameScored(got.Items, w) {
				t.Errorf("%s: %v, want %v", it, itemIDs(got.Items), itemIDs(w))
			}
			s.do(t, contractCase{method: "GET", path: "/items/" + it + "/similar?n=5&diversity=0", want: 200}).decode(t, &got)
			if len(got.Items) != 5 || !sameScored(got.Items[:1], long.Items[:1]) {
				t.Errorf("%s: diversity=0 %v, want 5 items led by %s", it, itemIDs(got.Items), long.Items[0].ItemID)
			}
		}
	})

	t.Run("bad values", func(t *testing.T) {
		for _, c := range []contractCase{
			{path: "/users/u0/recommendations?max_per_category=0", field: "max_per_category"},
			{path: "/users/u0/recommendations?max_per_category=two", field: "max_per_category"},
			{path: "/users/u0/recommendations?diversity=1.5", field: "diversity"},
			{path: "/users/u0/recommendations?diversity=-0.1", field: "diversity"},
			{path: "/users/u0/recommendations?diversity=much", field: "diversity"},
			{path: "/users/u0/recommendations?diversity=NaN", field: "diversity"},
			{path: "/items/i1/similar?max_per_category=-1", field: "max_per_category"},
			{path: "/items/i1/similar?diversity=2", field: "diversity"},
			{method: "POST", path: "/recommendations", body: `{"items":["i1"],"max_per_category":0}`, field: "max_per_category"},
			{method: "POST", path: "/recommendations", body: `{"items":["i1"],"diversity":1.01}`, field: "diversity"},
			{method: "POST", path: "/recommendations", body: `{"items":["i1"],"diversity":"high"}`, field: "diversity"},
			{method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"],"max_per_category":-2}`, field: "max_per_category"},
			{method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"],"diversity":-1}`, field: "diversity"},
		} {
			if c.method == "" {
				c.method = "GET"
			}
			c.want, c.invalid = 400, true
			s.do(t, c)
		}
	})
}
