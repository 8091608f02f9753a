package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// Paths and methods the contract does not list answer its shared 404 and
// 405 responses.
func testContractUnrouted(t *testing.T) {
	s := startContractServer(t, nil)
	for _, ex := range []contractCase{
		{name: "unknown path", method: "GET", path: "/nope", want: 404, unrouted: true},
		{name: "unknown sub path", method: "GET", path: "/items/item-1/nope", want: 404, unrouted: true},
		{name: "index.html is only served at /", method: "GET", path: "/index.html", want: 404, unrouted: true},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	for _, ex := range []contractCase{
		{name: "PATCH items", method: "PATCH", path: "/items", want: 405, unrouted: true},
		{name: "POST healthz", method: "POST", path: "/healthz", want: 405, unrouted: true},
		{name: "DELETE recommendations", method: "DELETE", path: "/users/u/recommendations", want: 405, unrouted: true},
		{name: "GET pair", method: "GET", path: "/users/u/interactions/i", want: 405, unrouted: true},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
}

// testContractBodyLimit provokes 413 on every route with a body, on a
// server with a 1 KiB limit; the same server takes small bodies.
func testContractBodyLimit(t *testing.T) {
	s := startContractServer(t, func(cfg *Config) { cfg.Limits.MaxBodyBytes = 1024 })
	events := strings.Repeat(`{"user_id":"user-1","item_id":"item-1"},`, 60)
	items := strings.Repeat(`{"id":"item-1","categories":["c"]},`, 60)
	features := strings.Repeat("0.125,", 600)
	// 20 names of 60 bytes meet the schema and pass 1 KiB.
	models := `["` + strings.Repeat(strings.Repeat("m", 60)+`","`, 19) + strings.Repeat("m", 60) + `"]`
	for _, ex := range []contractCase{
		{name: "small batch fits", method: "POST", path: "/interactions", body: `{"interactions":[` + events[:40*3-1] + `]}`, want: 201},
		{name: "interactions", method: "POST", path: "/interactions", body: `{"interactions":[` + events + `{"user_id":"u","item_id":"i"}]}`, want: 413},
		{name: "items", method: "POST", path: "/items", body: `{"items":[` + items + `{"id":"i"}]}`, want: 413},
		{name: "item", method: "PUT", path: "/items/item-1", body: `{"features":[` + features + `1]}`, want: 413},
		{name: "item patch", method: "PATCH", path: "/items/item-1", body: `{"features":[` + features + `1]}`, want: 413},
		{name: "search", method: "POST", path: "/search/similar", body: `{"features":[` + features + `1]}`, want: 413},
		{name: "recommend", method: "POST", path: "/recommendations", body: `{"items":[` + strings.Repeat(`"item-1",`, 120) + `"i"]}`, want: 413},
		{name: "rerank", method: "POST", path: "/users/u/rerank", body: `{"items":[` + strings.Repeat(`"item-1",`, 120) + `"i"]}`, want: 413},
		{name: "retrain", method: "POST", path: "/admin/retrain", body: `{"models":` + models + `}`, want: 413},
		{name: "evaluation", method: "POST", path: "/admin/evaluations", body: `{"models":` + models + `,"folds":1}`, want: 413},
		{name: "rule", method: "POST", path: "/admin/rules", body: `{"name":"r","action":"bury","condition":"` + strings.Repeat("true and ", 120) + `true"}`, want: 413},
		{name: "rule put", method: "PUT", path: "/admin/rules/r", body: `{"action":"bury","condition":"` + strings.Repeat("true and ", 120) + `true"}`, want: 413},
		{name: "placement", method: "PUT", path: "/admin/placements/p", body: `{"filter":"` + strings.Repeat("true and ", 120) + `true"}`, want: 413},
		{name: "experiment", method: "POST", path: "/admin/experiments", body: `{"name":"` + strings.Repeat("e", 128) + `","arms":[` +
			strings.Repeat(`{"model":"popular","share":10},`, 40) + `{"model":"popular","share":10}]}`, want: 413},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
}

// testContractStorageFull runs a server whose database may not grow past
// 96 KiB (--max-db-size, the stand-in for a full disk): writes that need
// more room answer 507 storage_unwritable and store nothing.
func testContractStorageFull(t *testing.T) {
	s := startContractServer(t, func(cfg *Config) { cfg.MaxDBSize = 96 << 10 })
	s.do(t, contractCase{name: "small item fits", method: "PUT", path: "/items/item-0", body: `{}`, want: 200})
	before, err := s.app.store.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var events, items, labels []string
	for k := range 3000 {
		events = append(events, fmt.Sprintf(`{"user_id":"user-%d","item_id":"item-%d"}`, k, k%97))
		items = append(items, fmt.Sprintf(`{"id":"item-%d","categories":["c%d"]}`, k, k%13))
	}
	for k := range 100 {
		labels = append(labels, fmt.Sprintf(`"l%d":"%s"`, k, strings.Repeat("x", 4000)))
	}
	for _, ex := range []contractCase{
		{name: "interactions", method: "POST", path: "/interactions", body: `{"interactions":[` + strings.Join(events, ",") + `]}`, want: 507},
		{name: "items", method: "POST", path: "/items", body: `{"items":[` + strings.Join(items, ",") + `]}`, want: 507},
		{name: "item", method: "PUT", path: "/items/item-1", body: `{"labels":{` + strings.Join(labels, ",") + `}}`, want: 507},
		{name: "item patch", method: "PATCH", path: "/items/item-0", ctype: "application/merge-patch+json", body: `{"labels":{` + strings.Join(labels, ",") + `}}`, want: 507},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	after, err := s.app.store.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("refused writes changed the counts: %+v → %+v", before, after)
	}
}

// testContractStoreClosed closes the store under a running server: every
// operation that reads or writes it must answer the contract's 500 (503 for
// readiness), never leak the cause.
func testContractStoreClosed(t *testing.T) {
	c := loadContract(t)
	s := startContractServer(t, nil)
	if err := s.app.store.Close(); err != nil {
		t.Fatal(err)
	}
	// Activation looks the model up among the served ones before it
	// touches the store: with none trained it is a 404 whatever the store's
	// state (testContractLifecycle provokes its 500).
	// Query by example checks for a content metric first: 503 without one.
	// The version answers the build without the store's schema.
	want := map[string]int{"getDashboard": 200, "getAPIDocs": 200, "getHealthz": 200, "getMetrics": 200, "getOpenAPI": 200, "getReadyz": 503,
		"activateModel": 404, "searchSimilar": 503, "createExperiment": 400, "getVersion": 200}
	checkEveryOperation(t, c, s, 500, want)
}

// testContractTimeout runs a server whose request timeout has passed before
// any handler starts: every operation that waits on the store answers 503.
func testContractTimeout(t *testing.T) {
	c := loadContract(t)
	// A negative timeout has passed before any handler starts, so the
	// answer does not hang on a timer racing the handler.
	s := startContractServer(t, func(cfg *Config) { cfg.Limits.RequestTimeout = -time.Second })
	// As with a closed store, activation answers 404 before it waits on
	// anything when no model is trained (testContractLifecycle provokes its
	// 503).
	want := map[string]int{"getDashboard": 200, "getAPIDocs": 200, "getHealthz": 200, "getMetrics": 200, "getOpenAPI": 200,
		"activateModel": 404, "createExperiment": 400, "getVersion": 200}
	checkEveryOperation(t, c, s, 503, want)
}

// checkEveryOperation sends every operation's example to s: each must
// answer its status in want, or status when want does not name it.
func checkEveryOperation(t *testing.T, c *contract, s *contractServer, status int, want map[string]int) {
	t.Helper()
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		ex := exampleExchange(t, c, method, path, op)
		ex.want = status
		if w, ok := want[op.OperationID]; ok {
			ex.want = w
		}
		s.do(t, ex)
	})
}
