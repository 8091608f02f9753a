package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
)

// errorEnvelope decodes body as the error envelope, failing the test when
// it is not one.
func errorEnvelope(tb testing.TB, header http.Header, body []byte) api.ErrorBody {
	tb.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		tb.Fatalf("Content-Type %q, want application/json; body %q", ct, body)
	}
	var out api.ErrorOut
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil || out.Error.Code == "" || out.Error.Message == "" {
		tb.Fatalf("not the error envelope (%v): %q", err, body)
	}
	return out.Error
}

// seedDetails gives a server two users and three items, one with labels.
func seedDetails(t *testing.T, a *testApp) {
	t.Helper()
	seed := `{"interactions":[{"user_id":"u1","item_id":"i1"},{"user_id":"u1","item_id":"i2","type":"purchase"},{"user_id":"u2","item_id":"i1"},{"user_id":"u2","item_id":"i3"}]}`
	if status, body := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(seed)); status != http.StatusCreated {
		t.Fatalf("seeding: %d %s", status, body)
	}
}

// TestHTTP_repeatedParameter gives each single-valued query parameter of
// every route that reads one twice: a 400 naming it, where the first value
// used to win silently. The repeatable ones (category, exclude) still take
// every value.
func TestHTTP_repeatedParameter(t *testing.T) {
	a := startApp(t, nil)
	seedDetails(t, a)
	cases := []struct{ path, param string }{
		{"/users/u1/recommendations?n=5&n=6", "n"},
		{"/users/u1/recommendations?offset=3&offset=4", "offset"},
		{"/users/u1/recommendations?model=a&model=b", "model"},
		{"/users/u1/recommendations?explain=true&explain=false", "explain"},
		{"/users/u1/recommendations?exclude_consumed=true&exclude_consumed=true", "exclude_consumed"},
		{"/users/u1/recommendations?n=5&n=", "n"},
		{"/users/u1/interactions?limit=1&limit=2", "limit"},
		{"/users/u1/interactions?cursor=AAAAAAAAAAE&cursor=AAAAAAAAAAI", "cursor"},
		{"/items?limit=1&limit=2", "limit"},
		{"/items?cursor=aTE&cursor=aTI", "cursor"},
		{"/items/i1/similar?n=1&n=2", "n"},
		{"/items/i1/similar?by=content&by=collaborative", "by"},
		{"/stats?days=1&days=2", "days"},
		{"/admin/jobs?limit=1&limit=2", "limit"},
		{"/admin/online?model=a&model=b", "model"},
		{"/admin/online?from=2026-01-01&from=2026-01-02", "from"},
		{"/admin/online?to=2026-01-01&to=2026-01-02", "to"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, a.URL+c.path, nil)
			resp, body := send(t, req)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
			}
			e := errorEnvelope(t, resp.Header, body)
			want := c.param + ": is given 2 times; give it once"
			if e.Code != api.CodeInvalid || e.Message != want || len(e.Details) != 1 || e.Details[0].Field != c.param {
				t.Fatalf("error %+v, want invalid %q naming %s", e, want, c.param)
			}
		})
	}
	t.Run("post parameters", func(t *testing.T) {
		status, body := a.do(t, http.MethodPost, "/admin/retrain?queue=true&queue=false", "", nil)
		if status != http.StatusBadRequest || !strings.Contains(string(body), "queue: is given 2 times") {
			t.Fatalf("retrain with queue twice: %d %s", status, body)
		}
		if jobs := a.jobCount(t); jobs != 0 {
			t.Fatalf("%d jobs after a refused retrain, want 0", jobs)
		}
	})
	t.Run("malformed query", func(t *testing.T) {
		status, body := a.do(t, http.MethodGet, "/users/u1/recommendations?n=%zz", "", nil)
		if status != http.StatusBadRequest || !strings.Contains(string(body), `the query string is malformed: invalid URL escape \"%zz\"`) {
			t.Fatalf("n=%%zz: %d %s", status, body)
		}
	})
	t.Run("repeatable parameters", func(t *testing.T) {
		var out api.RecommendationsOut
		if status := a.getJSON(t, "/users/u1/recommendations?exclude=i3&exclude=i1&exclude_consumed=false", &out); status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		for _, it := range out.Items {
			if it.ItemID == "i1" || it.ItemID == "i3" {
				t.Fatalf("excluded item %s answered: %+v", it.ItemID, out.Items)
			}
		}
		if status := a.getJSON(t, "/users/u1/recommendations?category=a&category=b", &out); status != http.StatusOK {
			t.Fatalf("two categories: status %d", status)
		}
	})
}

// send sends req and reads the whole answer.
func send(tb testing.TB, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, b
}

func gzipped(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestHTTP_contentEncoding sends bodies with each Content-Encoding: gzip is
// decoded, and the body limit counts the decoded bytes; identity is the
// body as it is; any other coding is 415 naming it, and nothing is stored.
func TestHTTP_contentEncoding(t *testing.T) {
	a := startApp(t, nil)
	post := func(t *testing.T, path, encoding string, body []byte) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, a.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if encoding != "" {
			req.Header.Set("Content-Encoding", encoding)
		}
		return send(t, req)
	}
	events := []byte(`{"interactions":[{"user_id":"g1","item_id":"x"},{"user_id":"g2","item_id":"x"},{"user_id":"g2","item_id":"y"}]}`)

	t.Run("gzip", func(t *testing.T) {
		for _, enc := range []string{"gzip", "GZIP", "x-gzip", "identity, gzip"} {
			before := a.counts(t)
			resp, body := post(t, "/interactions", enc, gzipped(t, events))
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("%s: %d %s", enc, resp.StatusCode, body)
			}
			if got := a.counts(t); got.Events != before.Events+3 {
				t.Fatalf("%s: events %d, want %d", enc, got.Events, before.Events+3)
			}
		}
		var u api.UserOut
		if status := a.getJSON(t, "/users/g2", &u); status != http.StatusOK || u.Items != 2 || u.Events != 8 {
			t.Fatalf("g2 after four gzip posts: %d %+v", status, u)
		}
		// A body with a gzip coding names its problems as JSON would.
		resp, body := post(t, "/interactions", "gzip", gzipped(t, []byte(`{"user_id":5,"item_id":"x"}`)))
		if e := errorEnvelope(t, resp.Header, body); resp.StatusCode != 400 || len(e.Details) != 1 || e.Details[0].Field != "user_id" {
			t.Fatalf("bad field in a gzip body: %d %+v", resp.StatusCode, e)
		}
	})
	t.Run("identity", func(t *testing.T) {
		before := a.counts(t)
		if resp, body := post(t, "/interactions", "identity", events); resp.StatusCode != http.StatusCreated {
			t.Fatalf("identity: %d %s", resp.StatusCode, body)
		}
		if got := a.counts(t); got.Events != before.Events+3 {
			t.Fatalf("identity: events %d, want %d", got.Events, before.Events+3)
		}
	})
	t.Run("other codings", func(t *testing.T) {
		before := a.counts(t)
		for _, enc := range []string{"br", "deflate", "compress", "zstd", "rot13", "gzip, br", "gzip, gzip"} {
			// The body is plain JSON: the coding is refused, not guessed.
			resp, body := post(t, "/interactions", enc, events)
			e := errorEnvelope(t, resp.Header, body)
			want := `Content-Encoding "` + strings.ToLower(enc) + `" is not supported; send the body as it is or with gzip`
			if resp.StatusCode != http.StatusUnsupportedMediaType || e.Code != api.CodeUnsupportedMedia || e.Message != want {
				t.Fatalf("%s: %d %+v, want 415 %q", enc, resp.StatusCode, e, want)
			}
		}
		// Every body-reading route goes through the same decoder.
		resp, body := post(t, "/items", "br", []byte(`{"items":[{"id":"z"}]}`))
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Fatalf("POST /items with br: %d %s", resp.StatusCode, body)
		}
		if got := a.counts(t); got != before {
			t.Fatalf("counts changed by refused bodies: %+v, want %+v", got, before)
		}
	})
	t.Run("corrupt gzip", func(t *testing.T) {
		before := a.counts(t)
		z := gzipped(t, events)
		flipped := slices.Clone(z)
		flipped[len(flipped)-6] ^= 0xff // the CRC-32 of the trailer
		cases := []struct {
			name string
			body []byte
			want string
		}{
			{"not gzip at all", events, "the body is sent with Content-Encoding gzip but does not decode: gzip: invalid header"},
			{"cut short", z[:len(z)/2], "the body is sent with Content-Encoding gzip but does not decode: the stream ends too early"},
			{"bad checksum", flipped, "the body is sent with Content-Encoding gzip but does not decode: gzip: invalid checksum"},
		}
		for _, c := range cases {
			resp, body := post(t, "/interactions", "gzip", c.body)
			e := errorEnvelope(t, resp.Header, body)
			if resp.StatusCode != http.StatusBadRequest || e.Message != c.want {
				t.Fatalf("%s: %d %q, want 400 %q", c.name, resp.StatusCode, e.Message, c.want)
			}
		}
		if got := a.counts(t); got != before {
			t.Fatalf("counts changed by corrupt bodies: %+v, want %+v", got, before)
		}
	})
	t.Run("gzip bomb", func(t *testing.T) {
		// 100 MB of JSON whitespace (what the decoder reads on without
		// failing) in about 100 KB, sent to a server whose body limit is
		// 1 MB: the limit stops it decoded, long before 100 MB.
		small := startApp(t, func(c *Config) { c.Limits.MaxBodyBytes = 1 << 20 })
		bomb := gzipped(t, bytes.Repeat([]byte(" "), 100<<20))
		if len(bomb) > 200<<10 {
			t.Fatalf("the bomb is %d bytes compressed", len(bomb))
		}
		req, _ := http.NewRequest(http.MethodPost, small.URL+"/interactions", bytes.NewReader(bomb))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		resp, body := send(t, req)
		runtime.ReadMemStats(&m1)
		e := errorEnvelope(t, resp.Header, body)
		want := "the body is larger than the limit of " + strconv.Itoa(1<<20) + " bytes"
		if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Code != api.CodeTooLarge || e.Message != want {
			t.Fatalf("bomb: %d %+v, want 413 %q", resp.StatusCode, e, want)
		}
		// The JSON decoder buffers what it has read of one value, so the
		// request allocates a few times the limit, not the 100 MB.
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 12<<20 {
			t.Fatalf("the bomb's request allocated %d bytes", alloc)
		}
		if got := small.counts(t); got.Events != 0 {
			t.Fatalf("events after the bomb: %d", got.Events)
		}
	})
}

// rawExchange sends raw bytes to the server on a new connection and reads
// one response.
func rawExchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", raw, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestHTTP_routerErrorsEnvelope sends, over raw TCP, requests that fail
// before any handler runs (net/http's own replies) or in a handler that is
// not ours (the dashboard's file server): each answer is the error
// envelope, with the status net/http chose.
func TestHTTP_routerErrorsEnvelope(t *testing.T) {
	a := startApp(t, nil)
	addr := a.Addr()
	cases := []struct {
		name, raw string
		status    int
		code, msg string
	}{
		{"lone % in the path", "GET /items/100% HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, "invalid",
			"malformed HTTP request: the request line or a header does not parse; an invalid %-escape in the path, such as a lone % or %zz, is the usual cause (send % as %25)"},
		{"%zz in the path", "GET /items/%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, "invalid",
			"malformed HTTP request: the request line or a header does not parse; an invalid %-escape in the path, such as a lone % or %zz, is the usual cause (send % as %25)"},
		{"%zz in a user path", "DELETE /users/a%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, "invalid",
			"malformed HTTP request: the request line or a header does not parse; an invalid %-escape in the path, such as a lone % or %zz, is the usual cause (send % as %25)"},
		{"malformed request line", "GET /items\r\nHost: 127.0.0.1\r\n\r\n", 400, "invalid",
			"malformed HTTP request: the request line or a header does not parse; an invalid %-escape in the path, such as a lone % or %zz, is the usual cause (send % as %25)"},
		{"no Host", "GET /items HTTP/1.1\r\n\r\n", 400, "invalid", "malformed HTTP request: missing required Host header"},
		{"malformed Host", "GET /items HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "invalid", "malformed HTTP request: malformed Host header"},
		{"invalid header name", "GET /items HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Name: x\r\n\r\n", 400, "invalid", "malformed HTTP request: invalid header name"},
		{"header too large", "GET /items HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", 431, "too_large",
			"the request's header fields are larger than the server accepts"},
		{"unknown transfer coding", "POST /interactions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: rot13\r\n\r\n", 501, "invalid",
			"the request's Transfer-Encoding is not supported; send the body with Content-Length or chunked"},
		{"HTTP/2.0 request line", "GET /items HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", 505, "invalid", "malformed HTTP request: unsupported protocol version"},
		{"dashboard file that does not exist", "GET /js/nothing.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "not_found", "GET /js/nothing.js: Not Found"},
		{"no route", "GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "not_found", "no route GET /nothing"},
		{"escaped path of no route", "GET /items/a%2Fb/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "not_found", "no route GET /items/a/b/nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := rawExchange(t, addr, c.raw)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %q", resp.StatusCode, c.status, body)
			}
			e := errorEnvelope(t, resp.Header, body)
			if e.Code != c.code || e.Message != c.msg {
				t.Fatalf("error %+v, want %s %q", e, c.code, c.msg)
			}
			if n, err := strconv.Atoi(resp.Header.Get("Content-Length")); err != nil || n != len(body) {
				t.Fatalf("Content-Length %q for a body of %d bytes", resp.Header.Get("Content-Length"), len(body))
			}
		})
	}
	// The server still answers after each of them.
	if status, body := a.do(t, http.MethodGet, "/healthz", "", nil); status != 200 {
		t.Fatalf("healthz after: %d %s", status, body)
	}
}

// TestHTTP_headOnEveryGETRoute walks every GET route of the server and
// sends the same request as GET and as HEAD: the same status and headers,
// and no body for HEAD. A 405 lists HEAD wherever it lists GET.
func TestHTTP_headOnEveryGETRoute(t *testing.T) {
	a := startApp(t, nil)
	seedDetails(t, a)
	if status, body := a.do(t, http.MethodPut, "/items/i1", "application/json", []byte(`{"labels":{"title":"One"}}`)); status != 200 {
		t.Fatalf("PUT: %d %s", status, body)
	}
	routes, ok := a.srv.Handler.(chi.Routes)
	if !ok {
		t.Fatalf("handler is a %T", a.srv.Handler)
	}
	// A value for each path parameter: a stored user and item, and ids
	// of job records and experiments that do not exist (a 404 on both).
	values := map[string]string{"/users/{id}": "u1", "/items/{id}": "i1", "/evaluations/{id}": "r1",
		"/admin/jobs/{id}": "j1", "/admin/experiments/{id}": "e1", "/admin/rules/{name}": "r1", "/admin/placements/{name}": "home"}
	param := regexp.MustCompile(`\{[^}]+\}`)
	var paths []string
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method != http.MethodGet {
			return nil
		}
		route = strings.ReplaceAll(route, "/*/", "/")
		path := strings.TrimSuffix(route, "/*")
		if path != "/" && route != path {
			path += "/app.js" // a file of a directory tree
		} else if len(path) > 1 {
			path = strings.TrimSuffix(path, "/")
		}
		if loc := param.FindStringIndex(path); loc != nil {
			v, ok := values[path[:loc[1]]]
			if !ok {
				t.Errorf("no value for the parameter of %s", route)
				return nil
			}
			path = path[:loc[0]] + v + path[loc[1]:]
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 20 {
		t.Fatalf("only %d GET routes walked: %q", len(paths), paths)
	}
	statuses := map[int]int{}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			get, _ := http.NewRequest(http.MethodGet, a.URL+path, nil)
			head, _ := http.NewRequest(http.MethodHead, a.URL+path, nil)
			gresp, gbody := send(t, get)
			hresp, hbody := send(t, head)
			statuses[gresp.StatusCode]++
			if hresp.StatusCode != gresp.StatusCode {
				t.Fatalf("HEAD %d, GET %d", hresp.StatusCode, gresp.StatusCode)
			}
			if len(hbody) != 0 {
				t.Fatalf("HEAD answered a body of %d bytes", len(hbody))
			}
			want := gresp.Header.Clone()
			if path == "/users/u1/recommendations" {
				// A HEAD shows no list, so it names none: its length is
				// the GET body's without the recommendation id.
				var m map[string]json.RawMessage
				if err := json.Unmarshal(gbody, &m); err != nil || m["recommendation_id"] == nil {
					t.Fatalf("GET body %s: %v", gbody, err)
				}
				n := len(gbody) - len(`,"recommendation_id":`) - len(m["recommendation_id"])
				want.Set("Content-Length", strconv.Itoa(n))
			}
			for _, h := range []http.Header{want, hresp.Header} {
				h.Del("Date")
			}
			if !headersEqual(want, hresp.Header) {
				t.Fatalf("HEAD headers %v, GET headers %v", hresp.Header, want)
			}
		})
	}
	// The walk made one GET and one HEAD of the recommendations: only the
	// GET's list is in the impression log.
	if err := a.online.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rep api.OnlineReportOut
	if status := a.getJSON(t, "/admin/online", &rep); status != 200 {
		t.Fatalf("GET /admin/online: %d", status)
	}
	lists := int64(0)
	for _, row := range rep.Totals {
		lists += row.Lists
	}
	if lists != 1 {
		t.Fatalf("%d lists in the impression log after one GET and one HEAD, want 1: %+v", lists, rep.Totals)
	}
	if statuses[200] < 15 {
		t.Fatalf("statuses %v: too few routes answered 200 to test HEAD on", statuses)
	}
	// A 405 lists HEAD with GET.
	for path, want := range map[string]string{"/items": "GET, HEAD, POST", "/users/u1": "DELETE, GET, HEAD", "/interactions": "POST"} {
		req, _ := http.NewRequest(http.MethodPatch, a.URL+path, nil)
		resp, body := send(t, req)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != want {
			t.Fatalf("PATCH %s: %d Allow %q, want 405 %q: %s", path, resp.StatusCode, resp.Header.Get("Allow"), want, body)
		}
	}
	// HEAD where there is no GET is a 405 too.
	req, _ := http.NewRequest(http.MethodHead, a.URL+"/interactions", nil)
	if resp, _ := send(t, req); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("HEAD /interactions: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// headersEqual compares headers by their values in order.
func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
