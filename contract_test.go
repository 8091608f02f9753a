package main

// The contract tests start the real App on 127.0.0.1:0 and check every
// request they send, and every response they get, against openapi.yaml with
// kin-openapi: a response with a status, content type or body the document
// does not describe fails the test, and so does a request whose verdict under
// the document disagrees with the case (a request the server must accept has
// to meet the contract; one the case marks invalid has to break it).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/go-chi/chi/v5"

	"recsys/api"
	"recsys/handlers"
	"recsys/web"
)

// contract is openapi.yaml loaded and routed, plus the (operation, status)
// pairs the tests have seen answered.
type contract struct {
	doc    *openapi3.T
	router routers.Router
	reqOpt *openapi3filter.Options
	resOpt *openapi3filter.Options

	mu   sync.Mutex
	seen map[string]map[int]bool // operationId → statuses answered
}

var (
	contractOnce sync.Once
	theContract  *contract
	contractErr  error
)

// loadContract loads, validates (examples included) and routes the embedded
// openapi.yaml, the very bytes the server serves.
func loadContract(tb testing.TB) *contract {
	tb.Helper()
	contractOnce.Do(func() {
		// kin-openapi has no decoder for text/html; the dashboard is a string.
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(openAPISpec)
		if err != nil {
			contractErr = fmt.Errorf("loading openapi.yaml: %w", err)
			return
		}
		if err := doc.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
			contractErr = fmt.Errorf("openapi.yaml is not a valid OpenAPI document: %w", err)
			return
		}
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			contractErr = fmt.Errorf("routing openapi.yaml: %w", err)
			return
		}
		theContract = &contract{
			doc:    doc,
			router: router,
			reqOpt: &openapi3filter.Options{AuthenticationFunc: presentCredentials, SkipSettingDefaults: true},
			resOpt: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
			seen:   map[string]map[int]bool{},
		}
	})
	if contractErr != nil {
		tb.Fatal(contractErr)
	}
	return theContract
}

// presentCredentials passes a security scheme when the request carries its
// credentials. Whether the key is right is the server's business: the
// contract only says how a key is sent.
func presentCredentials(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header
	switch s := in.SecurityScheme; s.Type {
	case "http":
		scheme, cred, ok := strings.Cut(h.Get("Authorization"), " ")
		if ok && strings.EqualFold(scheme, s.Scheme) && strings.TrimSpace(cred) != "" {
			return nil
		}
	case "apiKey":
		if s.In == "header" && h.Get(s.Name) != "" {
			return nil
		}
	}
	return in.NewError(nil)
}

func (c *contract) record(opID string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[opID] == nil {
		c.seen[opID] = map[int]bool{}
	}
	c.seen[opID][status] = true
}

// contractServer is a running App and how to reach it.
type contractServer struct {
	app  *App
	base string
	// auth is sent on every request that sets no credentials of its own.
	auth string
	// stop shuts the server down and closes its store; the test's cleanup
	// calls it too, so a test only calls it to reuse the database.
	stop func()
}

// startContractServer runs an App on loopback with a fresh database until the test
// ends. mutate adjusts the configuration first.
func startContractServer(t *testing.T, mutate func(*Config)) *contractServer {
	t.Helper()
	cfg := Config{
		Addr:   "127.0.0.1:0",
		DB:     filepath.Join(t.TempDir(), "recsys.db"),
		Policy: api.DefaultPolicy(),
		Limits: handlers.DefaultLimits,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	app, err := NewApp(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("NewApp: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := app.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	t.Cleanup(stop)
	// A server with no keys lets everything through, but the contract asks
	// clients for a key on guarded routes, so the tests send one anyway.
	return &contractServer{app: app, base: "http://" + app.Addr(), auth: "Bearer any-key-will-do", stop: stop}
}

var contractClient = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// contractCase is one request and what must come of it.
type contractCase struct {
	name   string
	method string
	path   string // escaped path and query
	body   string
	// ctype is the Content-Type of the body: application/json when empty
	// and there is a body; "-" sends none.
	ctype  string
	header map[string]string // extra headers; an Authorization or X-API-Key here replaces the default credentials
	noAuth bool              // send no credentials at all
	want   int               // the status; 0 accepts any status the contract documents
	// invalid says the request breaks openapi.yaml, so ValidateRequest must
	// reject it. Left false, the request must meet the contract.
	invalid bool
	// unrouted says openapi.yaml has no operation for the method and path.
	unrouted bool
	field    string // for a 400: a details[].field the error must name
}

// contractAnswer is what the server sent back.
type contractAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a contractAnswer) decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		tb.Fatalf("decoding %s: %v", a.body, err)
	}
}

func (s *contractServer) newRequest(tb testing.TB, ex contractCase) *http.Request {
	tb.Helper()
	var body io.Reader = http.NoBody
	if ex.body != "" {
		body = strings.NewReader(ex.body)
	}
	req, err := http.NewRequest(ex.method, s.base+ex.path, body)
	if err != nil {
		tb.Fatalf("%s %s: %v", ex.method, ex.path, err)
	}
	switch {
	case ex.ctype == "-":
	case ex.ctype != "":
		req.Header.Set("Content-Type", ex.ctype)
	case ex.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	own := false
	for k, v := range ex.header {
		req.Header.Set(k, v)
		own = own || http.CanonicalHeaderKey(k) == "Authorization" || http.CanonicalHeaderKey(k) == "X-Api-Key"
	}
	if !own && !ex.noAuth && s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	return req
}

// do checks the request against the contract, sends it, and checks the
// answer: status, content type, headers and body.
func (s *contractServer) do(t *testing.T, ex contractCase) contractAnswer {
	t.Helper()
	c := loadContract(t)
	ctx := context.Background()
	where := ex.method + " " + ex.path

	vreq := s.newRequest(t, ex)
	route, params, routeErr := c.router.FindRoute(vreq)
	var in *openapi3filter.RequestValidationInput
	switch {
	case routeErr != nil && !ex.unrouted:
		t.Errorf("%s: openapi.yaml has no operation for it: %v", where, routeErr)
	case routeErr == nil && ex.unrouted:
		t.Errorf("%s: the case says openapi.yaml has no operation for it, but it has %s", where, route.Operation.OperationID)
	case routeErr == nil:
		// The gorillamux router hands over escaped path segments; an
		// OpenAPI path parameter is the unescaped value.
		for k, v := range params {
			if u, err := url.PathUnescape(v); err == nil {
				params[k] = u
			}
		}
		in = &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: c.reqOpt}
		err := openapi3filter.ValidateRequest(ctx, in)
		switch {
		case ex.invalid && err == nil:
			t.Errorf("%s: the request meets openapi.yaml, but the case says it breaks it", where)
		case !ex.invalid && err != nil:
			t.Errorf("%s: the request breaks openapi.yaml: %v", where, err)
		}
	}

	resp, err := contractClient.Do(s.newRequest(t, ex))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", where, err)
	}
	a := contractAnswer{status: resp.StatusCode, header: resp.Header, body: body}
	if ex.want != 0 && a.status != ex.want {
		t.Errorf("%s: status %d, want %d; body: %s", where, a.status, ex.want, clipBody(body))
	}

	if in != nil {
		c.record(route.Operation.OperationID, a.status)
		rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: a.status,
			Header: a.header, Options: c.resOpt}
		rin.SetBodyBytes(body)
		if err := openapi3filter.ValidateResponse(ctx, rin); err != nil {
			t.Errorf("%s: the %d answer breaks openapi.yaml: %v\nContent-Type: %q\nbody: %s",
				where, a.status, err, a.header.Get("Content-Type"), clipBody(body))
		}
		if r := route.Operation.Responses.Status(a.status); r != nil && r.Value != nil && len(r.Value.Content) == 0 && len(body) > 0 {
			t.Errorf("%s: the %d answer has a body the contract does not describe: %s", where, a.status, clipBody(body))
		}
	} else if routeErr != nil {
		// No operation to check against: the answer must be the shared
		// 404 or 405 response of the contract.
		name := "NotFound"
		if errors.Is(routeErr, routers.ErrMethodNotAllowed) {
			name = "MethodNotAllowed"
		}
		c.checkSharedResponse(t, where, name, a)
	}

	if a.status >= 400 {
		var e api.ErrorOut
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s: the %d answer is not the error envelope: %v; body: %s", where, a.status, err, clipBody(body))
		} else {
			if e.Error.RequestID == "" {
				t.Errorf("%s: the error has no request_id: %s", where, clipBody(body))
			}
			if ex.field != "" && !slices.ContainsFunc(e.Error.Details, func(d api.ErrorDetail) bool { return d.Field == ex.field }) {
				t.Errorf("%s: the error does not name the field %q: %s", where, ex.field, clipBody(body))
			}
		}
	}
	return a
}

// checkSharedResponse validates an answer against components.responses[name].
func (c *contract) checkSharedResponse(t *testing.T, where, name string, a contractAnswer) {
	t.Helper()
	ref := c.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		t.Errorf("openapi.yaml has no components.responses.%s", name)
		return
	}
	for h, hr := range ref.Value.Headers {
		if hr.Value.Required && a.header.Get(h) == "" {
			t.Errorf("%s: the answer lacks the %s header that components.responses.%s requires", where, h, name)
		}
	}
	mt := ref.Value.Content.Get(a.header.Get("Content-Type"))
	if mt == nil {
		t.Errorf("%s: Content-Type %q is not one of components.responses.%s", where, a.header.Get("Content-Type"), name)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s: the answer is not JSON: %v; body: %s", where, err, clipBody(a.body))
		return
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
		t.Errorf("%s: the %d answer breaks components.responses.%s: %v\nbody: %s", where, a.status, name, err, clipBody(a.body))
	}
}

func clipBody(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// TestContract drives every route of the server through every documented
// status it can be made to answer, checking each request and answer against
// openapi.yaml, and ends by checking that nothing documented went unseen.
func TestContract(t *testing.T) {
	c := loadContract(t)
	scenarios := []struct {
		name string
		run  func(*testing.T)
	}{
		{"service", testContractService},
		{"items", testContractItems},
		{"interactions_users_recommendations", testContractInteractions},
		{"trained_model", testContractTrainedModel},
		{"content_model", testContractContentModel},
		{"jobs_models_evaluations", testContractLifecycle},
		{"unrouted", testContractUnrouted},
		{"auth", testContractAuth},
		{"auth_admin_disabled", testContractAdminDisabled},
		{"body_limit", testContractBodyLimit},
		{"store_closed", testContractStoreClosed},
		{"timeout", testContractTimeout},
		{"storage_full", testContractStorageFull},
	}
	all := true
	for _, sc := range scenarios {
		ran := false
		t.Run(sc.name, func(t *testing.T) { ran = true; sc.run(t) })
		all = all && ran
	}
	if !all || t.Failed() {
		return
	}
	t.Run("coverage", func(t *testing.T) { checkCoverage(t, c) })
}

// unprovoked are the documented answers no test can bring about yet, with
// the reason. An entry that a test does bring about is an error: keep the
// list true.
var unprovoked = map[string]string{}

func checkCoverage(t *testing.T, c *contract) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, path := range c.doc.Paths.InMatchingOrder() {
		for method, op := range c.doc.Paths.Value(path).Operations() {
			for code := range op.Responses.Map() {
				var status int
				if _, err := fmt.Sscanf(code, "%d", &status); err != nil {
					t.Errorf("%s %s: response %q is not a status code", method, path, code)
					continue
				}
				key := fmt.Sprintf("%s %d", op.OperationID, status)
				seen := c.seen[op.OperationID][status]
				reason, excused := unprovoked[key]
				switch {
				case !seen && !excused:
					t.Errorf("%s %s (%s) documents %d, but no test provoked it", method, path, op.OperationID, status)
				case seen && excused:
					t.Errorf("%s is listed as unprovoked (%s) but a test provoked it; drop it from the list", key, reason)
				}
			}
		}
	}
}

// Service routes, on a keyless server that reports ready while it serves
// popularity.
func testContractService(t *testing.T) {
	s := startContractServer(t, func(cfg *Config) { cfg.AllowFallback = true })
	const protobuf = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
	for _, ex := range []contractCase{
		{name: "healthz", method: "GET", path: "/healthz", want: 200},
		{name: "readyz", method: "GET", path: "/readyz", want: 200},
		{name: "metrics", method: "GET", path: "/metrics", want: 200},
		{name: "metrics protobuf", method: "GET", path: "/metrics", header: map[string]string{"Accept": protobuf}, want: 200},
		{name: "openapi", method: "GET", path: "/openapi.yaml", want: 200},
		{name: "dashboard", method: "GET", path: "/", want: 200},
		{name: "stats", method: "GET", path: "/stats", want: 200},
		{name: "stats with X-API-Key", method: "GET", path: "/stats", header: map[string]string{"X-API-Key": "k"}, want: 200},
		{name: "stats days 7", method: "GET", path: "/stats?days=7", want: 200},
		{name: "stats days 0", method: "GET", path: "/stats?days=0", want: 400, invalid: true, field: "days"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
}

func testContractItems(t *testing.T) {
	s := startContractServer(t, nil)
	long := strings.Repeat("x", 257)
	many := func(n int, f func(int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	for _, ex := range []contractCase{
		{name: "not ready before training", method: "GET", path: "/readyz", want: 503},
		{name: "put array features", method: "PUT", path: "/items/item-1", want: 200,
			body: `{"features":[1,2.5,-3],"categories":["comedy"],"labels":{"title":"One"}}`},
		{name: "put object features, matching id", method: "PUT", path: "/items/item-2", want: 200,
			body: `{"id":"item-2","features":{"year":1994},"hidden":true}`},
		{name: "put empty item", method: "PUT", path: "/items/item-0", body: `{}`, want: 200},
		{name: "put id with a slash", method: "PUT", path: "/items/a%2Fb", body: `{"categories":["drama"]}`, want: 200},
		{name: "put replaces", method: "PUT", path: "/items/item-0", body: `{"labels":{"k":"v"}}`, want: 200},
		{name: "post batch", method: "POST", path: "/items", want: 201,
			body: `{"items":[{"id":"item-3","categories":["drama"]},{"id":"item-4","features":[]},{"id":"item-5","hidden":false}]}`},
		{name: "get", method: "GET", path: "/items/item-1", want: 200},
		{name: "get id with a slash", method: "GET", path: "/items/a%2Fb", want: 200},
		{name: "list", method: "GET", path: "/items", want: 200},

		{name: "get unknown", method: "GET", path: "/items/nope", want: 404},
		{name: "get long id", method: "GET", path: "/items/" + long, want: 400, invalid: true, field: "id"},
		{name: "get control id", method: "GET", path: "/items/a%01", want: 400, invalid: true, field: "id"},

		{name: "put id mismatch", method: "PUT", path: "/items/item-1", body: `{"id":"other"}`, want: 400, field: "id"},
		{name: "put unknown field", method: "PUT", path: "/items/item-1", body: `{"colour":"red"}`, want: 400, invalid: true, field: "colour"},
		{name: "put malformed", method: "PUT", path: "/items/item-1", body: `{"features":[1,2`, want: 400, invalid: true},
		{name: "put features not numbers", method: "PUT", path: "/items/item-1", body: `{"features":"big"}`, want: 400, invalid: true},
		{name: "put features too long", method: "PUT", path: "/items/item-1", want: 400, invalid: true,
			body: `{"features":[` + many(4097, func(int) string { return "0" }) + `]}`},
		// OpenAPI 3.0 has no propertyNames: the empty feature name is
		// refused by the server but cannot be refused by the schema.
		{name: "put empty feature name", method: "PUT", path: "/items/item-1", body: `{"features":{"":1}}`, want: 400},
		{name: "put hidden not boolean", method: "PUT", path: "/items/item-1", body: `{"hidden":"yes"}`, want: 400, invalid: true, field: "hidden"},
		{name: "put too many categories", method: "PUT", path: "/items/item-1", want: 400, invalid: true, field: "categories",
			body: `{"categories":[` + many(101, func(i int) string { return fmt.Sprintf("%q", fmt.Sprint("c", i)) }) + `]}`},
		{name: "put empty category", method: "PUT", path: "/items/item-1", body: `{"categories":[""]}`, want: 400, invalid: true, field: "categories[0]"},
		{name: "put long label", method: "PUT", path: "/items/item-1", want: 400, invalid: true, field: "labels[title]",
			body: `{"labels":{"title":"` + strings.Repeat("y", 4097) + `"}}`},
		{name: "put empty body", method: "PUT", path: "/items/item-1", ctype: "application/json", want: 400, invalid: true},
		{name: "put two values", method: "PUT", path: "/items/item-1", body: `{} {}`, want: 400},
		{name: "put text/plain", method: "PUT", path: "/items/item-1", body: `{}`, ctype: "text/plain", want: 415, invalid: true},
		{name: "put no content type", method: "PUT", path: "/items/item-1", body: `{}`, ctype: "-", want: 415, invalid: true},
		{name: "put long id", method: "PUT", path: "/items/" + long, body: `{}`, want: 400, invalid: true, field: "id"},
		{name: "put control id", method: "PUT", path: "/items/%07", body: `{}`, want: 400, invalid: true, field: "id"},

		{name: "post no items", method: "POST", path: "/items", body: `{}`, want: 400, invalid: true, field: "items"},
		{name: "post empty items", method: "POST", path: "/items", body: `{"items":[]}`, want: 400, invalid: true, field: "items"},
		{name: "post item without id", method: "POST", path: "/items", body: `{"items":[{"features":[1]}]}`, want: 400, invalid: true, field: "items[0].id"},
		{name: "post duplicate ids", method: "POST", path: "/items", body: `{"items":[{"id":"d"},{"id":"d"}]}`, want: 400, field: "items[1].id"},
		{name: "post too many", method: "POST", path: "/items", want: 400, invalid: true, field: "items",
			body: `{"items":[` + many(api.MaxBatch+1, func(i int) string { return fmt.Sprintf(`{"id":"i%d"}`, i) }) + `]}`},
		{name: "post unknown field in item", method: "POST", path: "/items", body: `{"items":[{"id":"z","colour":1}]}`, want: 400, invalid: true, field: "items[0].colour"},
		{name: "post array body", method: "POST", path: "/items", body: `[]`, want: 400, invalid: true},
		{name: "post text/plain", method: "POST", path: "/items", body: `{"items":[{"id":"t"}]}`, ctype: "text/plain", want: 415, invalid: true},

		{name: "patch hides, merge-patch type", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", want: 200,
			body: `{"hidden":true,"labels":{"title":null,"year":"1999"}}`},
		{name: "patch as application/json", method: "PATCH", path: "/items/item-1", want: 200,
			body: `{"features":{"0":null,"extra":2},"categories":null,"hidden":null}`},
		{name: "patch vector and matching id", method: "PATCH", path: "/items/item-2", ctype: "application/merge-patch+json", want: 200,
			body: `{"id":"item-2","features":[1,2]}`},
		{name: "patch empty", method: "PATCH", path: "/items/item-2", ctype: "application/merge-patch+json", body: `{}`, want: 200},
		{name: "patch unknown item", method: "PATCH", path: "/items/nope", ctype: "application/merge-patch+json", body: `{"hidden":true}`, want: 404},
		{name: "patch unknown field", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"colour":"red"}`, want: 400, invalid: true, field: "colour"},
		{name: "patch not an object", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `[]`, want: 400, invalid: true},
		{name: "patch id mismatch", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"id":"other"}`, want: 400, field: "id"},
		{name: "patch label not a string", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"labels":{"t":1}}`, want: 400, invalid: true, field: "labels[t]"},
		{name: "patch empty category", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"categories":[""]}`, want: 400, invalid: true, field: "categories[0]"},
		{name: "patch text/plain", method: "PATCH", path: "/items/item-1", ctype: "text/plain", body: `{}`, want: 415, invalid: true},
		{name: "patch json-patch", method: "PATCH", path: "/items/item-1", ctype: "application/json-patch+json", body: `[]`, want: 415, invalid: true},

		{name: "list limit 0", method: "GET", path: "/items?limit=0", want: 400, invalid: true, field: "limit"},
		{name: "list limit 1001", method: "GET", path: "/items?limit=1001", want: 400, invalid: true, field: "limit"},
		{name: "list limit word", method: "GET", path: "/items?limit=ten", want: 400, invalid: true, field: "limit"},
		// A cursor is opaque to the contract: only the server knows which it issued.
		{name: "list forged cursor", method: "GET", path: "/items?cursor=%21%21", want: 400, field: "cursor"},
		{name: "list long cursor", method: "GET", path: "/items?cursor=" + strings.Repeat("A", 1025), want: 400, invalid: true, field: "cursor"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}

	t.Run("slash id round trip", func(t *testing.T) {
		var it api.ItemOut
		s.do(t, contractCase{method: "GET", path: "/items/a%2Fb", want: 200}).decode(t, &it)
		if it.ID != "a/b" {
			t.Errorf("id = %q, want a/b", it.ID)
		}
	})
	t.Run("pages", func(t *testing.T) {
		var ids []string
		path := "/items?limit=2"
		for range 10 {
			var page api.ItemsOut
			s.do(t, contractCase{method: "GET", path: path, want: 200}).decode(t, &page)
			for _, it := range page.Items {
				ids = append(ids, it.ID)
			}
			if page.NextCursor == "" {
				break
			}
			path = "/items?limit=2&cursor=" + url.QueryEscape(page.NextCursor)
		}
		want := []string{"a/b", "item-0", "item-1", "item-2", "item-3", "item-4", "item-5"}
		if !slices.Equal(ids, want) {
			t.Errorf("paged ids = %q, want %q", ids, want)
		}
	})
}

func testContractInteractions(t *testing.T) {
	s := startContractServer(t, nil)
	for _, ex := range []contractCase{
		{name: "put item", method: "PUT", path: "/items/item-1", body: `{"categories":["comedy"]}`, want: 200},
		{name: "one event", method: "POST", path: "/interactions", want: 201,
			body: `{"user_id":"user-1","item_id":"item-1","type":"purchase","timestamp":"2026-01-02T15:04:05Z"}`},
		{name: "one bare event", method: "POST", path: "/interactions", body: `{"user_id":"user-3","item_id":"item-9"}`, want: 201},
		{name: "batch", method: "POST", path: "/interactions", want: 201, body: `{"interactions":[
			{"user_id":"user-1","item_id":"item-3","type":"play","value":3},
			{"user_id":"user-2","item_id":"item-1"},
			{"user_id":"user-2","item_id":"item-7","type":"rating","value":2,"timestamp":"2026-01-02T17:04:05+02:00"},
			{"user_id":"user-1","item_id":"item-4","type":"dislike"},
			{"user_id":"user-1","item_id":"item-5","type":""}]}`},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}

	var before api.Counts
	s.do(t, contractCase{method: "GET", path: "/stats", want: 200}).decode(t, &before)
	ev := func(fields string) string { return `{"user_id":"u","item_id":"i"` + fields + `}` }
	long := strings.Repeat("x", 257)
	for _, ex := range []contractCase{
		{name: "malformed", method: "POST", path: "/interactions", body: `{"user_id":`, want: 400, invalid: true},
		{name: "syntax error", method: "POST", path: "/interactions", body: `{"user_id" "u"}`, want: 400, invalid: true},
		{name: "empty body", method: "POST", path: "/interactions", ctype: "application/json", want: 400, invalid: true},
		{name: "null body", method: "POST", path: "/interactions", body: `null`, want: 400, invalid: true},
		{name: "array body", method: "POST", path: "/interactions", body: `[]`, want: 400, invalid: true},
		{name: "unknown field", method: "POST", path: "/interactions", body: ev(`,"colour":1`), want: 400, invalid: true, field: "colour"},
		{name: "user_id not a string", method: "POST", path: "/interactions", body: `{"user_id":5,"item_id":"i"}`, want: 400, invalid: true, field: "user_id"},
		{name: "missing item_id", method: "POST", path: "/interactions", body: `{"user_id":"u"}`, want: 400, invalid: true, field: "item_id"},
		{name: "empty user_id", method: "POST", path: "/interactions", body: `{"user_id":"","item_id":"i"}`, want: 400, invalid: true, field: "user_id"},
		{name: "long user_id", method: "POST", path: "/interactions", body: `{"user_id":"` + long + `","item_id":"i"}`, want: 400, invalid: true, field: "user_id"},
		{name: "control in item_id", method: "POST", path: "/interactions", body: `{"user_id":"u","item_id":"a\u0001b"}`, want: 400, invalid: true, field: "item_id"},
		{name: "long type", method: "POST", path: "/interactions", body: ev(`,"type":"` + strings.Repeat("t", 65) + `"`), want: 400, invalid: true, field: "type"},
		// The accepted types are the server's configuration (--event-types),
		// so the schema cannot list them.
		{name: "unknown type", method: "POST", path: "/interactions", body: ev(`,"type":"teleport"`), want: 400, field: "type"},
		{name: "value not a number", method: "POST", path: "/interactions", body: ev(`,"value":"3"`), want: 400, invalid: true, field: "value"},
		{name: "bad timestamp", method: "POST", path: "/interactions", body: ev(`,"timestamp":"yesterday"`), want: 400, invalid: true, field: "timestamp"},
		{name: "both shapes", method: "POST", path: "/interactions", body: ev(`,"interactions":[{"user_id":"u","item_id":"i"}]`), want: 400, invalid: true},
		{name: "empty batch", method: "POST", path: "/interactions", body: `{"interactions":[]}`, want: 400, invalid: true, field: "interactions"},
		{name: "batch bad entry", method: "POST", path: "/interactions", want: 400, invalid: true, field: "interactions[1].user_id",
			body: `{"interactions":[{"user_id":"u","item_id":"i"},{"user_id":"","item_id":"i"}]}`},
		{name: "batch unknown type", method: "POST", path: "/interactions", want: 400, field: "interactions[1].type",
			body: `{"interactions":[{"user_id":"u","item_id":"i"},{"user_id":"u","item_id":"j","type":"teleport"}]}`},
		{name: "batch too big", method: "POST", path: "/interactions", want: 400, invalid: true, field: "interactions",
			body: `{"interactions":[` + strings.Repeat(`{"user_id":"u","item_id":"i"},`, api.MaxBatch) + `{"user_id":"u","item_id":"i"}]}`},
		// kin-openapi reads one JSON value and ignores the rest; the server
		// refuses a body of two values.
		{name: "two values", method: "POST", path: "/interactions", body: ev(``) + ev(``), want: 400},
		{name: "text/plain", method: "POST", path: "/interactions", body: ev(``), ctype: "text/plain", want: 415, invalid: true},
		{name: "no content type", method: "POST", path: "/interactions", body: ev(``), ctype: "-", want: 415, invalid: true},
		{name: "json with charset", method: "POST", path: "/interactions", body: `{"user_id":"u"}`, ctype: "application/json; charset=utf-8", want: 400, invalid: true, field: "item_id"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	t.Run("bad requests change nothing", func(t *testing.T) {
		var after api.Counts
		s.do(t, contractCase{method: "GET", path: "/stats", want: 200}).decode(t, &after)
		if after != before {
			t.Errorf("counts after refused requests = %+v, want %+v", after, before)
		}
	})

	for _, ex := range []contractCase{
		{name: "user", method: "GET", path: "/users/user-1", want: 200},
		{name: "user unknown", method: "GET", path: "/users/nobody", want: 404},
		{name: "user control id", method: "GET", path: "/users/%01", want: 400, invalid: true, field: "id"},
		{name: "user long id", method: "GET", path: "/users/" + long, want: 400, invalid: true, field: "id"},

		{name: "history", method: "GET", path: "/users/user-1/interactions", want: 200},
		{name: "history limit", method: "GET", path: "/users/user-1/interactions?limit=1", want: 200},
		{name: "history unknown user", method: "GET", path: "/users/nobody/interactions", want: 404},
		{name: "history limit 0", method: "GET", path: "/users/user-1/interactions?limit=0", want: 400, invalid: true, field: "limit"},
		{name: "history limit word", method: "GET", path: "/users/user-1/interactions?limit=x", want: 400, invalid: true, field: "limit"},
		{name: "history forged cursor", method: "GET", path: "/users/user-1/interactions?cursor=AAAA", want: 400, field: "cursor"},
		{name: "history long cursor", method: "GET", path: "/users/user-1/interactions?cursor=" + strings.Repeat("A", 65), want: 400, invalid: true, field: "cursor"},
		{name: "history control id", method: "GET", path: "/users/%1F/interactions", want: 400, invalid: true, field: "id"},

		{name: "recommendations", method: "GET", path: "/users/user-1/recommendations", want: 200},
		{name: "recommendations all params", method: "GET", path: "/users/user-1/recommendations?n=2&exclude_consumed=false&category=comedy&model=popular", want: 200},
		{name: "recommendations unknown user", method: "GET", path: "/users/nobody/recommendations?n=1000", want: 200},
		{name: "recommendations n 0", method: "GET", path: "/users/user-1/recommendations?n=0", want: 400, invalid: true, field: "n"},
		{name: "recommendations n 1001", method: "GET", path: "/users/user-1/recommendations?n=1001", want: 400, invalid: true, field: "n"},
		{name: "recommendations n word", method: "GET", path: "/users/user-1/recommendations?n=ten", want: 400, invalid: true, field: "n"},
		{name: "recommendations exclude_consumed word", method: "GET", path: "/users/user-1/recommendations?exclude_consumed=maybe", want: 400, invalid: true, field: "exclude_consumed"},
		{name: "recommendations long model", method: "GET", path: "/users/user-1/recommendations?model=" + strings.Repeat("m", 65), want: 400, invalid: true, field: "model"},
		{name: "recommendations long category", method: "GET", path: "/users/user-1/recommendations?category=" + strings.Repeat("c", 257), want: 400, invalid: true, field: "category"},
		{name: "recommendations control id", method: "GET", path: "/users/%7F/recommendations", want: 400, invalid: true, field: "id"},
		{name: "recommendations untrained model", method: "GET", path: "/users/user-1/recommendations?model=itemknn", want: 503},
		// Model names are the server's registry; the schema cannot list them.
		{name: "recommendations unknown model", method: "GET", path: "/users/user-1/recommendations?model=no-such-model", want: 400, field: "model"},

		{name: "similar untrained", method: "GET", path: "/items/item-1/similar", want: 503},
		{name: "similar by content", method: "GET", path: "/items/item-1/similar?by=content&n=5", want: 503},
		{name: "similar unknown item", method: "GET", path: "/items/nope/similar", want: 404},
		{name: "similar bad by", method: "GET", path: "/items/item-1/similar?by=magic", want: 400, invalid: true, field: "by"},
		{name: "similar n 0", method: "GET", path: "/items/item-1/similar?n=0", want: 400, invalid: true, field: "n"},
		{name: "similar control id", method: "GET", path: "/items/%01/similar", want: 400, invalid: true, field: "id"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}

	t.Run("recommendations content", func(t *testing.T) {
		var rec api.RecommendationsOut
		s.do(t, contractCase{method: "GET", path: "/users/nobody/recommendations", want: 200}).decode(t, &rec)
		if rec.Fallback != "popular" || rec.UserID != "nobody" || len(rec.Items) == 0 {
			t.Errorf("unknown user got %+v, want popular fallback items", rec)
		}
		var popular api.RecommendationsOut
		s.do(t, contractCase{method: "GET", path: "/users/user-1/recommendations?model=popular", want: 200}).decode(t, &popular)
		if popular.Fallback != "" {
			t.Errorf("model=popular answered fallback %q, want none", popular.Fallback)
		}
	})

	t.Run("history pages", func(t *testing.T) {
		var got []string
		path := "/users/user-1/interactions?limit=2"
		for range 10 {
			var page api.HistoryOut
			s.do(t, contractCase{method: "GET", path: path, want: 200}).decode(t, &page)
			for _, e := range page.Interactions {
				got = append(got, e.ItemID)
			}
			if page.NextCursor == "" {
				break
			}
			path = "/users/user-1/interactions?limit=2&cursor=" + url.QueryEscape(page.NextCursor)
		}
		sort.Strings(got)
		if want := []string{"item-1", "item-3", "item-4", "item-5"}; !slices.Equal(got, want) {
			t.Errorf("history items = %q, want %q", got, want)
		}
	})

	for _, ex := range []contractCase{
		{name: "forget pair", method: "DELETE", path: "/users/user-1/interactions/item-1", want: 204},
		{name: "forget pair again", method: "DELETE", path: "/users/user-1/interactions/item-1", want: 404},
		{name: "forget pair unknown item", method: "DELETE", path: "/users/user-1/interactions/never", want: 404},
		{name: "forget pair unknown user", method: "DELETE", path: "/users/nobody/interactions/item-1", want: 404},
		{name: "forget pair control user", method: "DELETE", path: "/users/%01/interactions/item-1", want: 400, invalid: true, field: "id"},
		{name: "forget pair control item", method: "DELETE", path: "/users/user-1/interactions/%01", want: 400, invalid: true, field: "item_id"},

		{name: "delete item", method: "DELETE", path: "/items/item-3", want: 204},
		{name: "delete item again", method: "DELETE", path: "/items/item-3", want: 404},
		{name: "delete item control id", method: "DELETE", path: "/items/%01", want: 400, invalid: true, field: "id"},

		{name: "delete user", method: "DELETE", path: "/users/user-2", want: 204},
		{name: "delete user again", method: "DELETE", path: "/users/user-2", want: 404},
		{name: "deleted user is gone", method: "GET", path: "/users/user-2", want: 404},
		{name: "delete user long id", method: "DELETE", path: "/users/" + long, want: 400, invalid: true, field: "id"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
}

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

// startJob sends a request that must start a job and returns the job's id:
// 202, state queued, and Location naming the job's record.
func (s *contractServer) startJob(t *testing.T, ex contractCase) string {
	t.Helper()
	ex.want = http.StatusAccepted
	a := s.do(t, ex)
	if a.status != http.StatusAccepted {
		t.FailNow()
	}
	var acc api.JobAccepted
	a.decode(t, &acc)
	if acc.JobID == "" || acc.State != api.JobQueued {
		t.Fatalf("%s %s: accepted %+v, want a job id and state queued", ex.method, ex.path, acc)
	}
	if loc := a.header.Get("Location"); loc != "/admin/jobs/"+acc.JobID {
		t.Errorf("%s %s: Location %q, want /admin/jobs/%s", ex.method, ex.path, loc, acc.JobID)
	}
	return acc.JobID
}

// getJob reads a job's record over HTTP.
func (s *contractServer) getJob(t *testing.T, id string) api.Job {
	t.Helper()
	a := s.do(t, contractCase{method: "GET", path: "/admin/jobs/" + url.PathEscape(id), want: http.StatusOK})
	if a.status != http.StatusOK {
		t.FailNow()
	}
	var j api.Job
	a.decode(t, &j)
	return j
}

// waitJob polls a job's record, every answer checked against the
// contract, until the job has ended.
func (s *contractServer) waitJob(t *testing.T, id string) api.Job {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		j := s.getJob(t, id)
		if j.Done() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s has not ended after a minute: %+v", id, j)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

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

// contractEvents is a small clustered data set as a POST /interactions
// batch: each of users users has perUser items, mostly from its own third
// of the catalogue of items items.
func contractEvents(users, items, perUser int) string {
	var evs []string
	for u := range users {
		seen := map[int]bool{}
		for k := 0; len(seen) < perUser; k++ {
			i := u%3 + 3*((u/3+k)%(items/3))
			if k%4 == 3 {
				i = (u*7 + k) % items
			}
			if !seen[i] {
				seen[i] = true
				evs = append(evs, fmt.Sprintf(`{"user_id":"u%d","item_id":"i%d"}`, u, i))
			}
		}
	}
	return `{"interactions":[` + strings.Join(evs, ",") + `]}`
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
		{name: "search not json", method: "POST", path: "/search/similar", body: `{}`, ctype: "text/plain", want: 415, invalid: true},
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
		{name: "retrain text/plain", method: "POST", path: "/admin/retrain", body: `{}`, ctype: "text/plain", want: 415, invalid: true},
		{name: "retrain no content type", method: "POST", path: "/admin/retrain", body: `{}`, ctype: "-", want: 415, invalid: true},

		{name: "evaluation unknown model", method: "POST", path: "/admin/evaluations", body: `{"models":["no-such-model"]}`, want: 400, field: "models[0]"},
		{name: "evaluation content metric", method: "POST", path: "/admin/evaluations", body: `{"models":["content"]}`, want: 400, field: "models[0]"},
		{name: "evaluation repeated model", method: "POST", path: "/admin/evaluations", body: `{"models":["popular","popular"]}`, want: 400, field: "models[1]"},
		{name: "activate content metric", method: "POST", path: "/admin/models/content/activate", want: 404},
		{name: "evaluation folds 11", method: "POST", path: "/admin/evaluations", body: `{"folds":11}`, want: 400, invalid: true, field: "folds"},
		{name: "evaluation folds negative", method: "POST", path: "/admin/evaluations", body: `{"folds":-1}`, want: 400, invalid: true, field: "folds"},
		{name: "evaluation folds fraction", method: "POST", path: "/admin/evaluations", body: `{"folds":1.5}`, want: 400, invalid: true, field: "folds"},
		{name: "evaluation bad protocol", method: "POST", path: "/admin/evaluations", body: `{"protocol":"leave-one-out"}`, want: 400, invalid: true, field: "protocol"},
		{name: "evaluation seed not a number", method: "POST", path: "/admin/evaluations", body: `{"seed":"x"}`, want: 400, invalid: true, field: "seed"},
		{name: "evaluation unknown field", method: "POST", path: "/admin/evaluations", body: `{"fold":1}`, want: 400, invalid: true, field: "fold"},
		{name: "evaluation text/plain", method: "POST", path: "/admin/evaluations", body: `{}`, ctype: "text/plain", want: 415, invalid: true},
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
		if rep.ID != reportID || rep.Folds != 1 || len(rep.Rows) != 2 || len(rep.Rows[1].Metrics) == 0 {
			t.Errorf("report %+v, want one fold, two rows with metrics", rep)
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

// testContractAuth sends every operation of the contract to a server with
// keys: without a key, with a wrong one, with the application key and with
// the admin key; the answers must follow each operation's security and
// x-recsys-key.
func testContractAuth(t *testing.T) {
	c := loadContract(t)
	const appKey, adminKey = "app-secret", "admin-secret"
	s := startContractServer(t, func(cfg *Config) { cfg.AppKey, cfg.AdminKey = appKey, adminKey })
	s.auth = ""
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		ex := exampleExchange(t, c, method, path, op)
		level, _ := op.Extensions["x-recsys-key"].(string)
		guarded := len(c.doc.Security) > 0
		if op.Security != nil {
			guarded = len(*op.Security) > 0
		}
		switch {
		case guarded && level != "app" && level != "admin":
			t.Fatalf("%s %s is guarded but x-recsys-key is %q, want app or admin", method, path, level)
		case !guarded && level != "":
			t.Fatalf("%s %s has x-recsys-key %q but no security", method, path, level)
		}
		notAuthError := func(t *testing.T, ex contractCase) {
			t.Helper()
			if a := s.do(t, ex); a.status == 401 || a.status == 403 {
				t.Errorf("%s %s: %d, want the route's own answer", method, path, a.status)
			}
		}
		if !guarded {
			ex.noAuth = true
			notAuthError(t, ex)
			return
		}
		none := ex
		none.noAuth, none.want, none.invalid = true, 401, true
		s.do(t, none)

		wrong := ex
		wrong.header, wrong.want = map[string]string{"X-API-Key": "not-a-key"}, 403
		s.do(t, wrong)

		app := ex
		app.header = map[string]string{"Authorization": "Bearer " + appKey}
		if level == "admin" {
			app.want = 403
			s.do(t, app)
		} else {
			notAuthError(t, app)
		}

		admin := ex
		admin.header = map[string]string{"X-API-Key": adminKey}
		notAuthError(t, admin)
	})
}

// testContractAdminDisabled sends every admin operation of the contract to
// a server with an application key and no admin key: each answers 403
// admin_disabled, with no key and with the application key, as its
// documented 403 response says; the app operations still take the key.
func testContractAdminDisabled(t *testing.T) {
	c := loadContract(t)
	const appKey = "app-secret"
	s := startContractServer(t, func(cfg *Config) { cfg.AppKey = appKey })
	s.auth = ""
	admin := 0
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		ex := exampleExchange(t, c, method, path, op)
		ex.header = map[string]string{"Authorization": "Bearer " + appKey}
		if level, _ := op.Extensions["x-recsys-key"].(string); level != "admin" {
			if a := s.do(t, ex); a.status == 401 || a.status == 403 {
				t.Errorf("%s %s with the app key: %d, want the route's own answer", method, path, a.status)
			}
			return
		}
		admin++
		none := ex
		none.header, none.noAuth, none.invalid = nil, true, true
		for _, ex := range []contractCase{ex, none} {
			ex.want = 403
			var out api.ErrorOut
			s.do(t, ex).decode(t, &out)
			if out.Error.Code != api.CodeAdminDisabled {
				t.Errorf("%s %s (no key: %v): code %q, want %q", method, path, ex.noAuth, out.Error.Code, api.CodeAdminDisabled)
			}
		}
	})
	if admin < 9 {
		t.Fatalf("only %d admin operations in the contract", admin)
	}
}

// forEachOperation runs f in a subtest for every operation, in a stable order.
func forEachOperation(t *testing.T, c *contract, f func(t *testing.T, method, path string, op *openapi3.Operation)) {
	paths := c.doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, path := range paths {
		ops := c.doc.Paths.Value(path).Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			t.Run(m+" "+path, func(t *testing.T) { f(t, m, path, ops[m]) })
		}
	}
}

// exampleExchange builds a request for op from the contract's own examples:
// path parameters from their example, the body from the request body's
// example (the first of its examples, by name).
func exampleExchange(t *testing.T, c *contract, method, path string, op *openapi3.Operation) contractCase {
	t.Helper()
	params := append(slices.Clone(c.doc.Paths.Value(path).Parameters), op.Parameters...)
	filled := path
	for _, p := range params {
		if p.Value.In != openapi3.ParameterInPath {
			continue
		}
		v, ok := p.Value.Example.(string)
		if !ok || v == "" {
			t.Fatalf("%s %s: path parameter %q has no string example", method, path, p.Value.Name)
		}
		filled = strings.ReplaceAll(filled, "{"+p.Value.Name+"}", url.PathEscape(v))
	}
	ex := contractCase{method: method, path: filled}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		mt := rb.Value.Content.Get("application/json")
		if mt == nil {
			t.Fatalf("%s %s: the request body is not application/json", method, path)
		}
		example := mt.Example
		if example == nil && len(mt.Examples) > 0 {
			names := make([]string, 0, len(mt.Examples))
			for n := range mt.Examples {
				names = append(names, n)
			}
			sort.Strings(names)
			example = mt.Examples[names[0]].Value.Value
		}
		if example == nil {
			t.Fatalf("%s %s: the request body has no example", method, path)
		}
		b, err := json.Marshal(example)
		if err != nil {
			t.Fatal(err)
		}
		ex.body = string(b)
	}
	return ex
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
		{name: "retrain", method: "POST", path: "/admin/retrain", body: `{"models":` + models + `}`, want: 413},
		{name: "evaluation", method: "POST", path: "/admin/evaluations", body: `{"models":` + models + `,"folds":1}`, want: 413},
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
	want := map[string]int{"getDashboard": 200, "getHealthz": 200, "getMetrics": 200, "getOpenAPI": 200, "getReadyz": 503,
		"activateModel": 404, "searchSimilar": 503}
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		ex := exampleExchange(t, c, method, path, op)
		ex.want = 500
		if w, ok := want[op.OperationID]; ok {
			ex.want = w
		}
		s.do(t, ex)
	})
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
	want := map[string]int{"getDashboard": 200, "getHealthz": 200, "getMetrics": 200, "getOpenAPI": 200,
		"activateModel": 404}
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		ex := exampleExchange(t, c, method, path, op)
		ex.want = 503
		if w, ok := want[op.OperationID]; ok {
			ex.want = w
		}
		s.do(t, ex)
	})
}

// TestRoutes_matchOpenAPI walks the chi routes of the running server and
// checks that they are exactly the operations of openapi.yaml.
func TestRoutes_matchOpenAPI(t *testing.T) {
	c := loadContract(t)
	s := startContractServer(t, nil)
	// The App serves what handlers.New returned: a chi router.
	routes, ok := s.app.srv.Handler.(chi.Routes)
	if !ok {
		t.Fatalf("the server's handler is a %T, not a chi.Routes", s.app.srv.Handler)
	}

	// Excluded: the dashboard's asset routes. handlers.registerWebRoutes
	// adds one route per file at the root of web.FS() (besides index.html,
	// served at "/") and a "/<dir>/*" tree per directory; the contract
	// documents the dashboard as GET / and not its assets one by one.
	assets := map[string]bool{}
	entries, err := fs.ReadDir(web.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && e.Name() != "index.html" {
			assets["/"+e.Name()] = true
		}
	}

	param := regexp.MustCompile(`\{([^{}:]+):[^{}]*\}`) // chi's {id:regexp} is OpenAPI's {id}
	got := map[string]bool{}
	err = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasSuffix(route, "/*") || assets[route] {
			return nil
		}
		route = param.ReplaceAllString(route, "{$1}")
		// A subrouter's root ("/items/{id}" + "/") walks with a trailing "/".
		if len(route) > 1 {
			route = strings.TrimSuffix(route, "/")
		}
		got[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]bool{}
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			want[method+" "+path] = true
		}
	}
	var missing, extra []string
	for r := range got {
		if !want[r] {
			extra = append(extra, r)
		}
	}
	for r := range want {
		if !got[r] {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("routes the server has and openapi.yaml does not document:\n  %s", strings.Join(extra, "\n  "))
	}
	if len(missing) > 0 {
		t.Errorf("operations openapi.yaml documents and the server does not route:\n  %s", strings.Join(missing, "\n  "))
	}
}

// TestOpenAPI_valid checks the document beyond what the loader checks: every
// operation has an id, and every error it documents is the shared envelope.
func TestOpenAPI_valid(t *testing.T) {
	c := loadContract(t)
	errSchema := c.doc.Components.Schemas["Error"]
	if errSchema == nil {
		t.Fatal("openapi.yaml has no components.schemas.Error")
	}
	ids := map[string]bool{}
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		if op.OperationID == "" || ids[op.OperationID] {
			t.Errorf("operationId %q is empty or repeated", op.OperationID)
		}
		ids[op.OperationID] = true
		for code, r := range op.Responses.Map() {
			if code < "400" {
				continue
			}
			mt := r.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || !refersTo(mt.Schema, "#/components/schemas/Error") {
				t.Errorf("response %s is not the Error envelope", code)
			}
		}
	})
}

func refersTo(s *openapi3.SchemaRef, ref string) bool {
	if s.Ref == ref {
		return true
	}
	if s.Value == nil {
		return false
	}
	return slices.ContainsFunc(s.Value.AllOf, func(s *openapi3.SchemaRef) bool { return refersTo(s, ref) })
}

// TestOpenAPI_served checks that GET /openapi.yaml serves openapi.yaml as it
// is in the repository.
func TestOpenAPI_served(t *testing.T) {
	s := startContractServer(t, nil)
	file, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := s.do(t, contractCase{method: "GET", path: "/openapi.yaml", want: 200})
	if ct := a.header.Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("Content-Type = %q, want application/yaml", ct)
	}
	if !bytes.Equal(a.body, file) {
		t.Errorf("GET /openapi.yaml served %d bytes that differ from openapi.yaml (%d bytes)", len(a.body), len(file))
	}
	if _, err := openapi3.NewLoader().LoadFromData(a.body); err != nil {
		t.Errorf("the served document does not load: %v", err)
	}
}
