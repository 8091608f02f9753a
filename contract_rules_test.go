package main

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// rulesData is shapesData with labels and features: item iN has price N
// (features.price), stock label N%4 and code label N, but "x" for i5.
func rulesData(t *testing.T, s *contractServer) {
	t.Helper()
	shapesData(t, s)
	var items []string
	for i := range 40 {
		code := strconv.Itoa(i)
		if i == 5 {
			code = "x"
		}
		items = append(items, fmt.Sprintf(`{"id":"i%d","categories":["c%d"],"hidden":%v,"features":{"price":%d},"labels":{"stock":"%d","code":"%s"}}`,
			i, i%3, i == 7, i, i%4, code))
	}
	s.do(t, contractCase{method: "POST", path: "/items", body: `{"items":[` + strings.Join(items, ",") + `]}`, want: 201})
}

// itemNumber is N of item id iN.
func itemNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "i"))
	return n
}

func keepItems(list []api.ScoredItem, keep func(n int) bool) []api.ScoredItem {
	return slices.DeleteFunc(slices.Clone(list), func(it api.ScoredItem) bool { return !keep(itemNumber(it.ItemID)) })
}

// filterErrors reads recsys_filter_errors_total from /metrics.
func filterErrors(t *testing.T, s *contractServer) float64 {
	t.Helper()
	a := s.do(t, contractCase{method: "GET", path: "/metrics", want: 200})
	for _, line := range strings.Split(string(a.body), "\n") {
		if v, ok := strings.CutPrefix(line, "recsys_filter_errors_total "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	t.Fatal("no recsys_filter_errors_total in /metrics")
	return 0
}

func q(s string) string { return url.QueryEscape(s) }

// testContractRules checks filter expressions, the rule actions with
// paging and exclude, campaigns, placements and the 4xx of the rule and
// placement routes.
func testContractRules(t *testing.T) {
	s := startContractServer(t, nil)
	rulesData(t, s)
	id := s.startJob(t, contractCase{method: "POST", path: "/admin/retrain", body: `{"models":["itemknn"]}`})
	if j := s.waitJob(t, id); j.State != api.JobSucceeded {
		t.Fatalf("training: %+v", j)
	}
	recs := func(u, query string) []api.ScoredItem {
		t.Helper()
		return s.recommendations(t, contractCase{path: "/users/" + u + "/recommendations?" + query}).Items
	}
	users := []string{"u0", "u1", "u13", "nobody"}

	t.Run("filter", func(t *testing.T) {
		for _, u := range users {
			all := recs(u, "n=1000")
			want := keepItems(all, func(n int) bool { return n < 20 && n%4 != 0 })
			got := recs(u, "n=5&filter="+q(`features.price < 20 and labels.stock != "0"`))
			if !sameScored(got, want[:5]) {
				t.Errorf("%s: %v, want %v", u, itemIDs(got), itemIDs(want[:5]))
			}
			page := recs(u, "n=3&offset=2&filter="+q(`features.price < 20 and labels.stock != "0"`))
			if !sameScored(page, want[2:5]) {
				t.Errorf("%s: page %v, want %v", u, itemIDs(page), itemIDs(want[2:5]))
			}
			post := s.recommendations(t, contractCase{method: "POST", path: "/recommendations",
				body: `{"items":["i1","i2"],"n":1000,"filter":"\"c1\" in categories"}`})
			for _, it := range post.Items {
				if itemNumber(it.ItemID)%3 != 1 {
					t.Errorf("POST /recommendations answered %s, not in c1", it.ItemID)
				}
			}
		}
		rr := s.recommendations(t, contractCase{method: "POST", path: "/users/u0/rerank",
			body: `{"items":["i1","i2","i3","i4"],"filter":"features.price >= 3"}`})
		if got := itemIDs(rr.Items); len(got) != 2 || !slices.Equal(rr.FilteredItems, []string{"i1", "i2"}) {
			t.Errorf("rerank: %v, filtered %v; want i3 and i4, filtered i1 and i2", got, rr.FilteredItems)
		}
		var sim api.SimilarOut
		s.do(t, contractCase{method: "GET", path: "/items/i1/similar?n=1000&filter=" + q(`features.price > 30`), want: 200}).decode(t, &sim)
		for _, it := range sim.Items {
			if itemNumber(it.ItemID) <= 30 {
				t.Errorf("similar answered %s, price <= 30", it.ItemID)
			}
		}
	})

	t.Run("a syntax error names its position", func(t *testing.T) {
		for _, ex := range []contractCase{
			{method: "GET", path: "/users/u0/recommendations?filter=" + q(`features.price <`)},
			{method: "GET", path: "/items/i1/similar?filter=" + q(`features.price <`)},
			{method: "POST", path: "/recommendations", body: `{"items":["i1"],"filter":"features.price <"}`},
			{method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"],"filter":"features.price <"}`},
		} {
			ex.want, ex.field = 400, "filter"
			a := s.do(t, ex)
			if !strings.Contains(string(a.body), "line 1, column 16") {
				t.Errorf("%s %s: %s, want the position line 1, column 16", ex.method, ex.path, a.body)
			}
		}
		a := s.do(t, contractCase{method: "GET", path: "/users/u0/recommendations?filter=" + q("true and\n  nope > 1"), want: 400, field: "filter"})
		if !strings.Contains(string(a.body), "line 2, column 3") || !strings.Contains(string(a.body), "unknown name nope") {
			t.Errorf("unknown name: %s", a.body)
		}
	})

	t.Run("a run-time error excludes only that item", func(t *testing.T) {
		all := recs("nobody", "n=1000")
		before := filterErrors(t, s)
		got := recs("nobody", "n=1000&filter="+q(`int(labels.code) >= 0`))
		if want := keepItems(all, func(n int) bool { return n != 5 }); !sameScored(got, want) {
			t.Errorf("%v, want %v", itemIDs(got), itemIDs(want))
		}
		if after := filterErrors(t, s); after != before+1 {
			t.Errorf("recsys_filter_errors_total %v → %v, want one more", before, after)
		}
	})

	rule := func(body string, want int, field string) contractAnswer {
		t.Helper()
		// A bad action or name breaks the schema too.
		invalid := field == "action" || field == "name"
		return s.do(t, contractCase{method: "POST", path: "/admin/rules", body: body, want: want, field: field, invalid: invalid})
	}
	del := func(name string) {
		t.Helper()
		s.do(t, contractCase{method: "DELETE", path: "/admin/rules/" + name, want: 204})
	}

	t.Run("boost with pages and exclude", func(t *testing.T) {
		plains := map[string][]api.ScoredItem{}
		for _, u := range users {
			plains[u] = recs(u, "n=1000")
		}
		rule(`{"name":"c1-up","condition":"\"c1\" in categories","action":"boost","factor":1000}`, 201, "")
		defer del("c1-up")
		for _, u := range users {
			plain := plains[u]
			boosted := recs(u, "n=1000&explain=true")
			var c1 []api.ScoredItem
			for _, it := range boosted {
				if itemNumber(it.ItemID)%3 == 1 {
					c1 = append(c1, it)
					if !slices.Equal(it.Rules, []string{"c1-up"}) {
						t.Errorf("%s: %s rules %v, want [c1-up]", u, it.ItemID, it.Rules)
					}
				} else if it.Rules != nil {
					t.Errorf("%s: %s rules %v, want none", u, it.ItemID, it.Rules)
				}
			}
			if len(plain) != len(boosted) {
				t.Fatalf("%s: %d items boosted, %d before", u, len(boosted), len(plain))
			}
			full := recs(u, "n=8")
			page := recs(u, "n=4&offset=4")
			if !sameScored(page, full[4:]) {
				t.Errorf("%s: page 2 %v, want %v", u, itemIDs(page), itemIDs(full[4:]))
			}
			ex := full[0].ItemID
			got := recs(u, "n=7&exclude="+ex)
			if !sameScored(got, full[1:]) {
				t.Errorf("%s excluding %s: %v, want %v", u, ex, itemIDs(got), itemIDs(full[1:]))
			}
			// The c1 items score 1000 times the model's score, and the list
			// is in the order of the boosted scores, equal ones in the
			// model's order.
			for _, it := range c1 {
				k := slices.IndexFunc(plain, func(p api.ScoredItem) bool { return p.ItemID == it.ItemID })
				if k < 0 || it.Score != plain[k].Score*1000 {
					t.Errorf("%s: %s scored %v, want 1000 × the model's", u, it.ItemID, it.Score)
				}
			}
			pos := func(id string) int {
				return slices.IndexFunc(plain, func(p api.ScoredItem) bool { return p.ItemID == id })
			}
			for k := 1; k < len(boosted); k++ {
				a, b := boosted[k-1], boosted[k]
				if b.Score > a.Score || b.Score == a.Score && pos(b.ItemID) < pos(a.ItemID) {
					t.Errorf("%s: boosted list out of order at %d", u, k)
				}
			}
		}
	})

	t.Run("pin bury exclude", func(t *testing.T) {
		base := recs("u1", "n=1000")
		last := base[len(base)-1].ItemID
		rule(`{"name":"pin-last","condition":"id == \"`+last+`\"","action":"pin","position":2}`, 201, "")
		got := recs("u1", "n=3&explain=true")
		if want := []string{base[0].ItemID, last, base[1].ItemID}; !slices.Equal(itemIDs(got), want) {
			t.Errorf("pin: %v, want %v", itemIDs(got), want)
		} else if !slices.Equal(got[1].Rules, []string{"pin-last"}) || got[0].Rules != nil {
			t.Errorf("pin: rules %v and %v", got[1].Rules, got[0].Rules)
		}
		if page := recs("u1", "n=2&offset=1"); !slices.Equal(itemIDs(page), []string{last, base[1].ItemID}) {
			t.Errorf("pin page: %v", itemIDs(page))
		}
		// Excluding the pinned item leaves the list as it was, unpinned.
		if got := recs("u1", "n=3&exclude="+last); !sameScored(got, base[:3]) {
			t.Errorf("pinned item excluded: %v, want %v", itemIDs(got), itemIDs(base[:3]))
		}
		del("pin-last")

		rule(`{"name":"bury-c0","condition":"\"c0\" in categories","action":"bury"}`, 201, "")
		got = recs("u1", "n=1000")
		want := append(keepItems(base, func(n int) bool { return n%3 != 0 }), keepItems(base, func(n int) bool { return n%3 == 0 })...)
		if !sameScored(got, want) {
			t.Errorf("bury: %v, want %v", itemIDs(got), itemIDs(want))
		}
		del("bury-c0")

		rule(`{"name":"no-stock","condition":"labels.stock == \"0\"","action":"exclude"}`, 201, "")
		got = recs("u1", "n=5")
		if want := keepItems(base, func(n int) bool { return n%4 != 0 })[:5]; !sameScored(got, want) {
			t.Errorf("exclude rule: %v, want %v", itemIDs(got), itemIDs(want))
		}
		del("no-stock")
	})

	t.Run("campaigns", func(t *testing.T) {
		base := recs("u1", "n=5")
		now := time.Now().UTC()
		future := now.Add(time.Hour).Format(time.RFC3339)
		past := now.Add(-time.Hour).Format(time.RFC3339)
		rule(`{"name":"later","condition":"true","action":"exclude","starts_at":"`+future+`"}`, 201, "")
		rule(`{"name":"over","condition":"true","action":"exclude","starts_at":"`+now.Add(-2*time.Hour).Format(time.RFC3339)+`","ends_at":"`+past+`"}`, 201, "")
		if got := recs("u1", "n=5"); !sameScored(got, base) {
			t.Errorf("inactive rules changed the list: %v, want %v", itemIDs(got), itemIDs(base))
		}
		var out api.RulesOut
		s.do(t, contractCase{method: "GET", path: "/admin/rules", want: 200}).decode(t, &out)
		if len(out.Rules) != 2 || out.Rules[0].Name != "later" || out.Rules[0].Active || out.Rules[1].Active {
			t.Errorf("rules %+v, want later and over, neither active", out.Rules)
		}
		s.do(t, contractCase{method: "PUT", path: "/admin/rules/later", body: `{"condition":"true","action":"exclude","starts_at":"` + past + `"}`, want: 200})
		if got := recs("u1", "n=5"); len(got) != 0 {
			t.Errorf("a started exclude-all rule left %v", itemIDs(got))
		}
		del("later")
		del("over")
	})

	t.Run("placements", func(t *testing.T) {
		s.do(t, contractCase{method: "PUT", path: "/admin/placements/home", body: `{"n":4,"filter":"features.price < 30","max_per_category":1}`, want: 201})
		s.do(t, contractCase{method: "PUT", path: "/admin/placements/home", body: `{"n":4,"filter":"features.price < 30","max_per_category":2}`, want: 200})
		rule(`{"name":"home-only","condition":"labels.stock == \"1\"","action":"exclude","placements":["home"]}`, 201, "")
		defer del("home-only")
		for _, u := range users {
			all := recs(u, "n=1000")
			want := capped(keepItems(all, func(n int) bool { return n < 30 && n%4 != 1 }), 2, 4)
			if got := recs(u, "placement=home"); !sameScored(got, want) {
				t.Errorf("%s: %v, want %v", u, itemIDs(got), itemIDs(want))
			}
			// The request narrows: its n, its filter ANDed, the smaller cap.
			narrowed := capped(keepItems(all, func(n int) bool { return n < 30 && n%4 != 1 && n%2 == 0 }), 1, 3)
			if got := recs(u, "placement=home&n=3&max_per_category=1&filter="+q(`int(features.price) % 2 == 0`)); !sameScored(got, narrowed) {
				t.Errorf("%s narrowed: %v, want %v", u, itemIDs(got), itemIDs(narrowed))
			}
			if got := recs(u, "n=1000"); !sameScored(got, all) {
				t.Errorf("%s: the placement's rule reached an answer without it", u)
			}
		}
		s.do(t, contractCase{method: "GET", path: "/users/u0/recommendations?placement=nope", want: 404})
		s.do(t, contractCase{method: "POST", path: "/recommendations", body: `{"items":["i1"],"placement":"nope"}`, want: 404})
		s.do(t, contractCase{method: "POST", path: "/users/u0/rerank", body: `{"items":["i1"],"placement":"nope"}`, want: 404})
		var p api.PlacementOut
		s.do(t, contractCase{method: "GET", path: "/admin/placements/home", want: 200}).decode(t, &p)
		if p.N != 4 || p.MaxPerCategory != 2 || p.Filter != "features.price < 30" {
			t.Errorf("placement %+v", p)
		}
		var ps api.PlacementsOut
		s.do(t, contractCase{method: "GET", path: "/admin/placements", want: 200}).decode(t, &ps)
		if len(ps.Placements) != 1 || ps.Placements[0].Name != "home" {
			t.Errorf("placements %+v", ps)
		}
		s.do(t, contractCase{method: "PUT", path: "/admin/placements/bad", body: `{"filter":"1 +"}`, want: 400, field: "filter"})
		s.do(t, contractCase{method: "PUT", path: "/admin/placements/bad", body: `{"model":"a","experiment":"b"}`, want: 400, field: "experiment"})
		s.do(t, contractCase{method: "PUT", path: "/admin/placements/-bad", body: `{}`, want: 400, field: "name", invalid: true})
		s.do(t, contractCase{method: "PUT", path: "/admin/placements/bad", body: `{}`, ctype: "application/xml", want: 415, invalid: true})
		s.do(t, contractCase{method: "GET", path: "/admin/placements/-bad", want: 400, invalid: true})
		s.do(t, contractCase{method: "GET", path: "/admin/placements/nope", want: 404})
		s.do(t, contractCase{method: "DELETE", path: "/admin/placements/-bad", want: 400, invalid: true})
		s.do(t, contractCase{method: "DELETE", path: "/admin/placements/home", want: 204})
		s.do(t, contractCase{method: "DELETE", path: "/admin/placements/home", want: 404})
	})

	t.Run("rule routes", func(t *testing.T) {
		rule(`{"name":"r1","condition":"true","action":"bury"}`, 201, "")
		rule(`{"name":"r1","condition":"true","action":"bury"}`, 409, "")
		for _, tt := range []struct{ body, field string }{
			{`{"name":"r2","condition":"true","action":"hide"}`, "action"},
			{`{"name":"r2","condition":"true","action":"boost"}`, "factor"},
			{`{"name":"r2","condition":"true","action":"pin"}`, "position"},
			{`{"name":"r2","condition":"1 +","action":"bury"}`, "condition"},
			{`{"name":"r2","condition":"true","action":"bury","starts_at":"2027-01-02T00:00:00Z","ends_at":"2027-01-01T00:00:00Z"}`, "ends_at"},
			{`{"name":"r 2","condition":"true","action":"bury"}`, "name"},
		} {
			rule(tt.body, 400, tt.field)
		}
		s.do(t, contractCase{method: "POST", path: "/admin/rules", body: `{}`, ctype: "application/xml", want: 415, invalid: true})
		var r api.RuleOut
		s.do(t, contractCase{method: "GET", path: "/admin/rules/r1", want: 200}).decode(t, &r)
		if r.Name != "r1" || r.Action != "bury" || !r.Active || len(r.Placements) != 0 {
			t.Errorf("rule %+v", r)
		}
		s.do(t, contractCase{method: "GET", path: "/admin/rules/-x", want: 400, invalid: true})
		s.do(t, contractCase{method: "GET", path: "/admin/rules/r9", want: 404})
		s.do(t, contractCase{method: "PUT", path: "/admin/rules/r1", body: `{"condition":"true","action":"pin","position":3}`, want: 200})
		s.do(t, contractCase{method: "PUT", path: "/admin/rules/r1", body: `{"condition":"true","action":"pin"}`, want: 400, field: "position"})
		s.do(t, contractCase{method: "PUT", path: "/admin/rules/r1", body: `{}`, ctype: "application/xml", want: 415, invalid: true})
		s.do(t, contractCase{method: "PUT", path: "/admin/rules/r9", body: `{"condition":"true","action":"bury"}`, want: 404})
		s.do(t, contractCase{method: "DELETE", path: "/admin/rules/-x", want: 400, invalid: true})
		s.do(t, contractCase{method: "DELETE", path: "/admin/rules/r1", want: 204})
		s.do(t, contractCase{method: "DELETE", path: "/admin/rules/r1", want: 404})
	})
}
