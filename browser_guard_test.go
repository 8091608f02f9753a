package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// guardRequest is one request of the browser-guard tests: Host replaces
// the request's Host header when set; header holds name, value pairs.
type guardRequest struct {
	method, path string
	host         string
	ctype        string
	body         string
	header       []string
}

// send sends r to the server at base (http://127.0.0.1:PORT) and returns
// the status and the decoded error envelope (zero for a success).
func (r guardRequest) send(t *testing.T, base string) (int, api.ErrorOut) {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, base+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	for k := 0; k+1 < len(r.header); k += 2 {
		req.Header.Set(r.header[k], r.header[k+1])
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out api.ErrorOut
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(b, &out); err != nil || out.Error.Code == "" {
			t.Fatalf("%s %s: %d without the error envelope: %q", r.method, r.path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, out
}

// guardCase is a request and what must come of it: a 403 forbidden whose
// message holds every one of why, or (why empty) the route's own status.
type guardCase struct {
	name   string
	req    guardRequest
	status int
	why    []string
}

func checkGuardCases(t *testing.T, base string, cases []guardCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, out := c.req.send(t, base)
			if status != c.status {
				t.Fatalf("%d %+v, want %d", status, out.Error, c.status)
			}
			if c.why == nil {
				return
			}
			if out.Error.Code != api.CodeForbidden {
				t.Errorf("code %q, want %q", out.Error.Code, api.CodeForbidden)
			}
			for _, w := range c.why {
				if !strings.Contains(out.Error.Message, w) {
					t.Errorf("message %q does not say %q", out.Error.Message, w)
				}
			}
		})
	}
}

// TestBrowserGuard_noKeys: a server started with no keys on loopback, the
// local default, keeps web pages out. A state-changing request that a page
// on another site can make a browser send without a CORS preflight is 403
// forbidden with a message saying why: the issue's own example (a text
// POST from http://evil.example switching the served model), a form or
// text body with no Origin (an old browser), Sec-Fetch-Site cross-site or
// same-site, Origin null. A Host that is not a loopback name (DNS
// rebinding: a page on evil.example resolving to 127.0.0.1 reads answers)
// is 403 naming the host and --allowed-hosts, but for the health probes.
// Each refused request changed nothing. The dashboard's same-origin JSON,
// curl's requests (no Origin; no body, or JSON) and every loopback name
// pass, and a non-JSON type a browser cannot send cross-site (XML) is
// still the decoder's 415.
func TestBrowserGuard_noKeys(t *testing.T) {
	a := startApp(t, nil)
	host := strings.TrimPrefix(a.URL, "http://")
	if status := a.postJSON(t, "/interactions", map[string]any{"interactions": []map[string]string{
		{"user_id": "u1", "item_id": "i1"}, {"user_id": "u2", "item_id": "i1"}, {"user_id": "u2", "item_id": "i2"}}}, nil); status != http.StatusCreated {
		t.Fatalf("seeding events: %d", status)
	}
	// A trained popular model that is not the active one: what the
	// issue's request switched to.
	waitJobDone(t, a, a.retrain(t, "popular", "itemknn"))
	if status, b := a.do(t, http.MethodPost, "/admin/models/itemknn/activate", "", nil); status != http.StatusOK {
		t.Fatalf("activating itemknn: %d %s", status, b)
	}
	_, modelsBefore := a.do(t, http.MethodGet, "/models", "", nil)
	if !strings.Contains(string(modelsBefore), `"popular"`) {
		t.Fatalf("popular is not trained: %s", modelsBefore)
	}
	countsBefore := a.counts(t)
	ev := `{"user_id":"u9","item_id":"i9"}`
	const sameOrigin, crossSite = "same-origin", "cross-site"
	checkGuardCases(t, a.URL, []guardCase{
		{"issue example: text POST from evil.example activates a model",
			guardRequest{method: "POST", path: "/admin/models/popular/activate", ctype: "text/plain", header: []string{"Origin", "http://evil.example"}},
			403, []string{"cross-site request refused", "Origin http://evil.example is not this server's"}},
		{"foreign Origin with a JSON body",
			guardRequest{method: "POST", path: "/interactions", ctype: "application/json", body: ev, header: []string{"Origin", "http://evil.example"}},
			403, []string{"Origin http://evil.example"}},
		{"Origin null (a sandboxed page)",
			guardRequest{method: "POST", path: "/interactions", ctype: "application/json", body: ev, header: []string{"Origin", "null"}},
			403, []string{"Origin null"}},
		{"Sec-Fetch-Site cross-site",
			guardRequest{method: "POST", path: "/admin/retrain", ctype: "application/json", body: `{}`, header: []string{"Sec-Fetch-Site", crossSite}},
			403, []string{"Sec-Fetch-Site: cross-site"}},
		{"Sec-Fetch-Site same-site (another port or subdomain)",
			guardRequest{method: "DELETE", path: "/users/u1", header: []string{"Sec-Fetch-Site", "same-site", "Origin", "http://127.0.0.1:1"}},
			403, []string{"Sec-Fetch-Site: same-site"}},
		{"text/plain POST without an Origin",
			guardRequest{method: "POST", path: "/interactions", ctype: "text/plain;charset=UTF-8", body: ev},
			403, []string{"Content-Type text/plain", "application/json"}},
		{"a link's ping (text/ping, no Origin) switching the model",
			guardRequest{method: "POST", path: "/admin/models/popular/activate", ctype: "text/ping", body: "PING"},
			403, []string{"Content-Type text/ping"}},
		{"empty form POST (a bare HTML form)",
			guardRequest{method: "POST", path: "/admin/models/popular/activate", ctype: "application/x-www-form-urlencoded"},
			403, []string{"Content-Type application/x-www-form-urlencoded"}},
		{"multipart form PUT",
			guardRequest{method: "PUT", path: "/items/i1", ctype: "multipart/form-data; boundary=x", body: "--x--"},
			403, []string{"Content-Type multipart/form-data"}},
		{"body without a Content-Type",
			guardRequest{method: "POST", path: "/interactions", body: ev},
			403, []string{"without a Content-Type"}},
		{"foreign Host reads a user (DNS rebinding)",
			guardRequest{method: "GET", path: "/users/u1", host: "evil.example:" + portOf(host)},
			403, []string{`Host "evil.example:`, "--allowed-hosts evil.example", "RECSYS_ALLOWED_HOSTS"}},
		{"foreign Host reads the dashboard",
			guardRequest{method: "GET", path: "/", host: "evil.example"},
			403, []string{`Host "evil.example"`}},
		{"foreign Host posts JSON from its own origin",
			guardRequest{method: "POST", path: "/interactions", host: "evil.example", ctype: "application/json", body: ev,
				header: []string{"Origin", "http://evil.example", "Sec-Fetch-Site", sameOrigin}},
			403, []string{`Host "evil.example"`}},
		{"a non-loopback address as Host", guardRequest{method: "GET", path: "/users/u1", host: "10.1.2.3"},
			403, []string{`Host "10.1.2.3"`}},
		{"health probe with a foreign Host", guardRequest{method: "GET", path: "/healthz", host: "10.1.2.3:8080"}, 200, nil},
		{"readiness probe with a foreign Host", guardRequest{method: "GET", path: "/readyz", host: "lb.example"}, 200, nil},
	})
	if _, after := a.do(t, http.MethodGet, "/models", "", nil); !bytes.Equal(after, modelsBefore) {
		t.Errorf("refused requests changed /models: %s → %s", modelsBefore, after)
	}
	if after := a.counts(t); after != countsBefore {
		t.Errorf("refused requests changed the store: %+v → %+v", countsBefore, after)
	}
	if status, _ := (guardRequest{method: "GET", path: "/users/u1"}).send(t, a.URL); status != http.StatusOK {
		t.Fatalf("u1 was deleted by a refused request: GET %d", status)
	}

	checkGuardCases(t, a.URL, []guardCase{
		{"dashboard: same-origin JSON", guardRequest{method: "POST", path: "/interactions", ctype: "application/json", body: ev,
			header: []string{"Origin", "http://" + host, "Sec-Fetch-Site", sameOrigin}}, 201, nil},
		{"an old browser's same-origin JSON (Origin, no Sec-Fetch-Site)", guardRequest{method: "POST", path: "/interactions",
			ctype: "application/json", body: ev, header: []string{"Origin", "http://" + host}}, 201, nil},
		{"a typed or bookmarked request (Sec-Fetch-Site none)", guardRequest{method: "POST", path: "/interactions",
			ctype: "application/json", body: ev, header: []string{"Sec-Fetch-Site", "none"}}, 201, nil},
		{"curl: POST without a body", guardRequest{method: "POST", path: "/admin/models/popular/activate"}, 200, nil},
		{"curl: JSON", guardRequest{method: "POST", path: "/interactions", ctype: "application/json", body: ev}, 201, nil},
		{"curl: DELETE", guardRequest{method: "DELETE", path: "/users/u9/interactions/i9"}, 204, nil},
		{"XML is the decoder's 415", guardRequest{method: "POST", path: "/interactions", ctype: "application/xml", body: ev}, 415, nil},
		{"cross-site GET is a read", guardRequest{method: "GET", path: "/users/u1", header: []string{"Sec-Fetch-Site", crossSite}}, 200, nil},
		{"Host localhost", guardRequest{method: "GET", path: "/users/u1", host: "localhost:" + portOf(host)}, 200, nil},
		{"Host LOCALHOST. (case, final dot)", guardRequest{method: "GET", path: "/users/u1", host: "LOCALHOST."}, 200, nil},
		{"Host under .localhost", guardRequest{method: "GET", path: "/users/u1", host: "app.localhost:" + portOf(host)}, 200, nil},
		{"Host 127.0.0.2", guardRequest{method: "GET", path: "/users/u1", host: "127.0.0.2"}, 200, nil},
		{"Host [::1]", guardRequest{method: "GET", path: "/users/u1", host: "[::1]:" + portOf(host)}, 200, nil},
	})
}

// portOf is the port of a host:port.
func portOf(hostport string) string {
	_, port, _ := strings.Cut(hostport, ":")
	return port
}

// TestBrowserGuard_allowedHosts: --allowed-hosts adds names to the
// loopback ones. On a server with no keys the listed name is answered (its
// dashboard's same-origin JSON too) and others still refused; on a server
// with keys, which answers any Host by default (the keys protect it), the
// list restricts the Host, but for the health probes a load balancer sends
// by address. With keys the cross-site checks stay off: a text body is the
// decoder's 415 and another origin's request with the key is served.
func TestBrowserGuard_allowedHosts(t *testing.T) {
	ev := `{"user_id":"u1","item_id":"i1"}`
	t.Run("no keys", func(t *testing.T) {
		a := startApp(t, func(c *Config) { c.AllowedHosts = []string{"recsys.example"} })
		checkGuardCases(t, a.URL, []guardCase{
			{"listed name", guardRequest{method: "POST", path: "/interactions", host: "recsys.example:8080", ctype: "application/json", body: ev,
				header: []string{"Origin", "http://recsys.example:8080", "Sec-Fetch-Site", "same-origin"}}, 201, nil},
			{"listed name, case and final dot", guardRequest{method: "GET", path: "/users/u1", host: "RECSYS.example."}, 200, nil},
			{"unlisted name", guardRequest{method: "GET", path: "/users/u1", host: "other.example"}, 403, []string{`Host "other.example"`}},
			{"a page on the listed name still cannot post text", guardRequest{method: "POST", path: "/interactions", host: "recsys.example",
				ctype: "text/plain", body: ev}, 403, []string{"Content-Type text/plain"}},
		})
	})
	t.Run("keys, no list", func(t *testing.T) {
		a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = testAppKey, testAdminKey })
		key := []string{"Authorization", "Bearer " + testAppKey}
		checkGuardCases(t, a.URL, []guardCase{
			{"any Host with the key", guardRequest{method: "POST", path: "/interactions", host: "recsys.example", ctype: "application/json", body: ev, header: key}, 201, nil},
			{"any Host without the key", guardRequest{method: "GET", path: "/users/u1", host: "evil.example"}, 401, nil},
			{"text body with the key is the decoder's 415", guardRequest{method: "POST", path: "/interactions", ctype: "text/plain", body: ev, header: key}, 415, nil},
			{"another origin with the key", guardRequest{method: "POST", path: "/interactions", ctype: "application/json", body: ev,
				header: append([]string{"Origin", "https://app.example", "Sec-Fetch-Site", "cross-site"}, key...)}, 201, nil},
		})
	})
	t.Run("keys and a list", func(t *testing.T) {
		a := startApp(t, func(c *Config) {
			c.AppKey, c.AdminKey, c.AllowedHosts = testAppKey, testAdminKey, []string{"recsys.example"}
		})
		key := []string{"Authorization", "Bearer " + testAppKey}
		checkGuardCases(t, a.URL, []guardCase{
			{"listed name", guardRequest{method: "GET", path: "/users/u1", host: "recsys.example", header: key}, 404, nil},
			{"loopback", guardRequest{method: "GET", path: "/users/u1", header: key}, 404, nil},
			{"unlisted name, with the key", guardRequest{method: "GET", path: "/users/u1", host: "evil.example", header: key},
				403, []string{`Host "evil.example"`, "--allowed-hosts"}},
			{"unlisted address", guardRequest{method: "GET", path: "/metrics", host: "10.0.0.5:8080"}, 403, []string{`Host "10.0.0.5:8080"`}},
			{"load balancer's health probe by address", guardRequest{method: "GET", path: "/healthz", host: "10.0.0.5:8080"}, 200, nil},
			{"load balancer's readiness probe by address", guardRequest{method: "GET", path: "/readyz", host: "10.0.0.5:8080"}, 503, nil},
		})
	})
}

// TestHostsOf: which servers check the Host. One with no keys on loopback
// always does; one with keys, or one that listens beyond loopback with no
// keys (--insecure, whose names the server cannot know), only when
// --allowed-hosts is given.
func TestHostsOf(t *testing.T) {
	list := []string{"recsys.example"}
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{Addr: "127.0.0.1:8080"}, true},
		{Config{Addr: "localhost:8080"}, true},
		{Config{Addr: "[::1]:8080"}, true},
		{Config{Addr: "127.0.0.1:8080", AppKey: testAppKey}, false},
		{Config{Addr: "127.0.0.1:8080", AdminKey: testAdminKey}, false},
		{Config{Addr: "127.0.0.1:8080", AppKey: testAppKey, AllowedHosts: list}, true},
		{Config{Addr: "0.0.0.0:8080", Insecure: true}, false},
		{Config{Addr: "0.0.0.0:8080", Insecure: true, AllowedHosts: list}, true},
		{Config{Addr: ":8080", AppKey: testAppKey, AdminKey: testAdminKey}, false},
		{Config{Addr: ":8080", AppKey: testAppKey, AdminKey: testAdminKey, AllowedHosts: list}, true},
	} {
		if got := hostsOf(c.cfg); got.Check != c.want || len(got.Allowed) != len(c.cfg.AllowedHosts) {
			t.Errorf("%+v: %+v, want Check %v", c.cfg, got, c.want)
		}
	}
}

// TestServeFlags_allowedHosts: --allowed-hosts (or RECSYS_ALLOWED_HOSTS)
// is a comma-separated list of names or addresses, read in lower case and
// without ports; a URL or a pattern is an error naming the flag.
func TestServeFlags_allowedHosts(t *testing.T) {
	c, err := parseServeFlags([]string{"--allowed-hosts", " recsys.example, Other.Example:8080,,10.0.0.5,[fd00::1]:80 "}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(c.AllowedHosts, " "), "recsys.example other.example 10.0.0.5 fd00::1"; got != want {
		t.Errorf("AllowedHosts %q, want %q", got, want)
	}
	t.Setenv("RECSYS_ALLOWED_HOSTS", "from-env.example")
	if c, err = parseServeFlags(nil, io.Discard); err != nil || len(c.AllowedHosts) != 1 || c.AllowedHosts[0] != "from-env.example" {
		t.Errorf("from the environment: %q, %v", c.AllowedHosts, err)
	}
	for _, bad := range []string{"http://recsys.example", "recsys.example/x", "*.example.com", "user@host"} {
		if _, err := parseServeFlags([]string{"--allowed-hosts", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "--allowed-hosts") {
			t.Errorf("--allowed-hosts %q: %v, want an error naming the flag", bad, err)
		}
	}
}
