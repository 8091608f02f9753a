package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// TestAPI_badInput sends each kind of bad request to a live server and
// checks the status, the error code, the field named, and that the store
// is unchanged.
func TestAPI_badInput(t *testing.T) {
	a := startApp(t, nil)
	seed := `{"interactions":[{"user_id":"u1","item_id":"i1"},{"user_id":"u1","item_id":"i2","type":"purchase"},{"user_id":"u2","item_id":"i1"}]}`
	if status, body := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(seed)); status != http.StatusCreated {
		t.Fatalf("seeding: %d %s", status, body)
	}
	before := a.counts(t)

	batch := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"interactions":[`)
		for k := 0; k < n; k++ {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"user_id":"b%d","item_id":"x"}`, k)
		}
		b.WriteString(`]}`)
		return b.String()
	}
	long := strings.Repeat("a", 300)
	cases := []struct {
		name, method, path, contentType, body string
		status                                int
		code, field                           string
	}{
		{"malformed JSON", "POST", "/interactions", "application/json", `{"user_id":"u1",`, 400, "invalid", ""},
		{"not JSON at all", "POST", "/interactions", "application/json", `user_id=u1`, 400, "invalid", ""},
		{"two JSON values", "POST", "/interactions", "application/json", `{"user_id":"u","item_id":"i"} {}`, 400, "invalid", ""},
		{"unknown field", "POST", "/interactions", "application/json", `{"user_id":"u","item_id":"i","colour":"red"}`, 400, "invalid", "colour"},
		{"missing user_id", "POST", "/interactions", "application/json", `{"item_id":"i1"}`, 400, "invalid", "user_id"},
		{"empty user_id", "POST", "/interactions", "application/json", `{"user_id":"","item_id":"i1"}`, 400, "invalid", "user_id"},
		{"300-byte user_id", "POST", "/interactions", "application/json", `{"user_id":"` + long + `","item_id":"i1"}`, 400, "invalid", "user_id"},
		{"control character in item_id", "POST", "/interactions", "application/json", `{"user_id":"u1","item_id":"a\u0007b"}`, 400, "invalid", "item_id"},
		{"wrong type for user_id", "POST", "/interactions", "application/json", `{"user_id":5,"item_id":"i1"}`, 400, "invalid", "user_id"},
		{"bad timestamp", "POST", "/interactions", "application/json", `{"user_id":"u","item_id":"i","timestamp":"yesterday"}`, 400, "invalid", "timestamp"},
		{"timestamp before 1970", "POST", "/interactions", "application/json", `{"user_id":"u","item_id":"i","timestamp":"1969-07-20T20:17:00Z"}`, 400, "invalid", "timestamp"},
		{"timestamp in a batch after 2262", "POST", "/interactions", "application/json", `{"interactions":[{"user_id":"u","item_id":"i","timestamp":"3000-01-01T00:00:00Z"}]}`, 400, "invalid", "interactions[0].timestamp"},
		{"features not a vector", "PUT", "/items/i1", "application/json", `{"features":"big"}`, 400, "invalid", "features"},
		{"method not allowed", "PATCH", "/items", "application/json", `{}`, 405, "method_not_allowed", ""},
		{"unknown event type", "POST", "/interactions", "application/json", `{"user_id":"u","item_id":"i","type":"teleport"}`, 400, "invalid", "type"},
		{"bad event in a batch", "POST", "/interactions", "application/json", `{"interactions":[{"user_id":"ok","item_id":"i"},{"user_id":"","item_id":"i"}]}`, 400, "invalid", "interactions[1].user_id"},
		{"empty batch", "POST", "/interactions", "application/json", `{"interactions":[]}`, 400, "invalid", "interactions"},
		{"batch of 10,001", "POST", "/interactions", "application/json", batch(10001), 400, "invalid", "interactions"},
		{"single and batch at once", "POST", "/interactions", "application/json", `{"user_id":"u","item_id":"i","interactions":[{"user_id":"u","item_id":"i"}]}`, 400, "invalid", ""},
		{"wrong content type", "POST", "/interactions", "application/xml", `{"user_id":"u","item_id":"i"}`, 415, "unsupported_media", ""},
		// With no keys, a text body or one without a type is a web page's
		// request (TestBrowserGuard).
		{"text content type", "POST", "/interactions", "text/plain", `{"user_id":"u","item_id":"i"}`, 403, "forbidden", ""},
		{"no content type", "POST", "/interactions", "", `{"user_id":"u","item_id":"i"}`, 403, "forbidden", ""},
		{"empty body", "POST", "/interactions", "application/json", ``, 400, "invalid", ""},
		{"n=0", "GET", "/users/u1/recommendations?n=0", "", "", 400, "invalid", "n"},
		{"n=1001", "GET", "/users/u1/recommendations?n=1001", "", "", 400, "invalid", "n"},
		{"n=abc", "GET", "/users/u1/recommendations?n=abc", "", "", 400, "invalid", "n"},
		{"exclude_consumed=maybe", "GET", "/users/u1/recommendations?exclude_consumed=maybe", "", "", 400, "invalid", "exclude_consumed"},
		{"similar by=magic", "GET", "/items/i1/similar?by=magic", "", "", 400, "invalid", "by"},
		{"max_per_category=0", "GET", "/users/u1/recommendations?max_per_category=0", "", "", 400, "invalid", "max_per_category"},
		{"diversity=x", "GET", "/users/u1/recommendations?diversity=x", "", "", 400, "invalid", "diversity"},
		{"similar diversity=1.1", "GET", "/items/i1/similar?diversity=1.1", "", "", 400, "invalid", "diversity"},
		{"rerank diversity as a string", "POST", "/users/u1/rerank", "application/json", `{"items":["i1"],"diversity":"0.5"}`, 400, "invalid", "diversity"},
		{"300-byte id in path", "GET", "/users/" + long, "", "", 400, "invalid", "id"},
		{"unknown user", "GET", "/users/nobody", "", "", 404, "not_found", ""},
		{"unknown user history", "GET", "/users/nobody/interactions", "", "", 404, "not_found", ""},
		{"unknown item", "GET", "/items/nothing", "", "", 404, "not_found", ""},
		{"similar to unknown item", "GET", "/items/nothing/similar", "", "", 404, "not_found", ""},
		{"delete unknown user", "DELETE", "/users/nobody", "", "", 404, "not_found", ""},
		{"delete unknown pair", "DELETE", "/users/u2/interactions/i2", "", "", 404, "not_found", ""},
		{"delete unknown item", "DELETE", "/items/nothing", "", "", 404, "not_found", ""},
		{"history limit=0", "GET", "/users/u1/interactions?limit=0", "", "", 400, "invalid", "limit"},
		{"history bad cursor", "GET", "/users/u1/interactions?cursor=@@", "", "", 400, "invalid", "cursor"},
		{"item with id mismatch", "PUT", "/items/i1", "application/json", `{"id":"other"}`, 400, "invalid", "id"},
		{"item features not numbers", "PUT", "/items/i1", "application/json", `{"features":["a"]}`, 400, "invalid", ""},
		{"item batch missing id", "POST", "/items", "application/json", `{"items":[{"categories":["a"]}]}`, 400, "invalid", "items[0].id"},
		{"item batch duplicate id", "POST", "/items", "application/json", `{"items":[{"id":"d"},{"id":"d"}]}`, 400, "invalid", "items[1].id"},
		{"item empty category", "PUT", "/items/i9", "application/json", `{"categories":[""]}`, 400, "invalid", "categories[0]"},
		{"unknown route", "GET", "/nowhere", "", "", 404, "not_found", ""},
		// Strings must be valid UTF-8: distinct ids must not merge into U+FFFD.
		{"invalid UTF-8 in user_id", "POST", "/interactions", "application/json", "{\"user_id\":\"a\xff\",\"item_id\":\"i1\"}", 400, "invalid", "user_id"},
		{"lone surrogate in item_id", "POST", "/interactions", "application/json", `{"user_id":"u1","item_id":"a\ud800"}`, 400, "invalid", "item_id"},
		{"lone low surrogate in a batch", "POST", "/interactions", "application/json", `{"interactions":[{"user_id":"u1","item_id":"i1"},{"user_id":"\udc00","item_id":"i1"}]}`, 400, "invalid", "interactions[1].user_id"},
		{"invalid UTF-8 in an item id", "POST", "/items", "application/json", "{\"items\":[{\"id\":\"\xc3\"}]}", 400, "invalid", "items[0].id"},
		{"lone surrogate in a category", "PUT", "/items/i1", "application/json", `{"categories":["\ud83d"]}`, 400, "invalid", "categories[0]"},
		{"lone surrogate in a feature name", "PUT", "/items/i1", "application/json", `{"features":{"a\ud800":1}}`, 400, "invalid", "features"},
		{"invalid UTF-8 in a label name", "PUT", "/items/i1", "application/json", "{\"labels\":{\"t\xff\":\"x\"}}", 400, "invalid", "labels"},
		{"lone surrogate in a label value", "PUT", "/items/i1", "application/json", `{"labels":{"title":"\ud800"}}`, 400, "invalid", "labels[title]"},
		{"lone surrogate in search features", "POST", "/search/similar", "application/json", `{"features":{"\udfff":1}}`, 400, "invalid", "features"},
		// Member names match exactly and once.
		{"upper-case member name", "POST", "/interactions", "application/json", `{"USER_ID":"u1","item_id":"i1"}`, 400, "invalid", "USER_ID"},
		{"mixed-case member name in a batch", "POST", "/interactions", "application/json", `{"interactions":[{"user_id":"u1","Item_Id":"i1"}]}`, 400, "invalid", "interactions[0].Item_Id"},
		{"mixed-case item member", "PUT", "/items/i1", "application/json", `{"Hidden":true}`, 400, "invalid", "Hidden"},
		{"repeated member name", "POST", "/interactions", "application/json", `{"user_id":"u1","item_id":"i1","user_id":"u2"}`, 400, "invalid", "user_id"},
		{"repeated feature name", "PUT", "/items/i1", "application/json", `{"features":{"a":1,"a":2}}`, 400, "invalid", "features[a]"},
		// A timestamp is an RFC 3339 string, never a number.
		{"numeric timestamp", "POST", "/interactions", "application/json", `{"user_id":"u","item_id":"i","timestamp":1700000000}`, 400, "invalid", "timestamp"},
		{"numeric timestamp in a batch", "POST", "/interactions", "application/json", `{"interactions":[{"user_id":"u","item_id":"i","timestamp":1700000000}]}`, 400, "invalid", "interactions[0].timestamp"},
		// A type with a threshold (rating>=4) needs the value it is judged by.
		{"rating without a value", "POST", "/interactions", "application/json", `{"user_id":"u1","item_id":"i1","type":"rating"}`, 400, "invalid", "value"},
		{"rating with a null value", "POST", "/interactions", "application/json", `{"user_id":"u1","item_id":"i1","type":"rating","value":null}`, 400, "invalid", "value"},
		{"rating without a value in a batch", "POST", "/interactions", "application/json", `{"interactions":[{"user_id":"u1","item_id":"i1","type":"rating","value":5},{"user_id":"u1","item_id":"i2","type":"rating"}]}`, 400, "invalid", "interactions[1].value"},
		{"features not numbers in a batch", "POST", "/items", "application/json", `{"items":[{"id":"a"},{"id":"b","features":"x"}]}`, 400, "invalid", "items[1].features"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := a.do(t, c.method, c.path, c.contentType, []byte(c.body))
			if status != c.status {
				t.Fatalf("status = %d, want %d; body %s", status, c.status, body)
			}
			var out api.ErrorOut
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("body is not the error envelope: %s", body)
			}
			if out.Error.Code != c.code || out.Error.Message == "" {
				t.Fatalf("error = %+v, want code %q with a message", out.Error, c.code)
			}
			if c.field != "" {
				named := false
				for _, d := range out.Error.Details {
					named = named || d.Field == c.field
				}
				if !named {
					t.Fatalf("details %+v do not name field %q", out.Error.Details, c.field)
				}
			}
			if after := a.counts(t); after != before {
				t.Fatalf("store changed: %+v → %+v", before, after)
			}
		})
	}
}

func TestAPI_bodyTooLarge(t *testing.T) {
	a := startApp(t, func(c *Config) { c.Limits.MaxBodyBytes = 1024 })
	body := `{"interactions":[` + strings.Repeat(`{"user_id":"u","item_id":"i"},`, 100) + `{"user_id":"u","item_id":"i"}]}`
	status, b := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(body))
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), `"too_large"`) {
		t.Fatalf("status %d body %s, want 413 too_large", status, b)
	}
	if c := a.counts(t); c.Events != 0 {
		t.Fatalf("events = %d after a rejected body", c.Events)
	}
}

func TestAPI_auth(t *testing.T) {
	a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = testAppKey, testAdminKey })
	ev := []byte(`{"user_id":"u","item_id":"i"}`)
	cases := []struct {
		name, method, path string
		body               []byte
		key                string
		status             int
	}{
		{"write without key", "POST", "/interactions", ev, "", 401},
		{"write with wrong key", "POST", "/interactions", ev, "not-the-key-0123456", 403},
		{"write with app key", "POST", "/interactions", ev, testAppKey, 201},
		{"write with admin key", "POST", "/interactions", ev, testAdminKey, 201},
		{"read with app key", "GET", "/users/u", nil, testAppKey, 200},
		{"item delete with app key", "DELETE", "/items/i", nil, testAppKey, 403},
		{"erasure with app key", "DELETE", "/users/u/interactions/i", nil, testAppKey, 204},
		{"item delete with admin key", "DELETE", "/items/i", nil, testAdminKey, 204},
		{"health needs no key", "GET", "/healthz", nil, "", 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.key != "" {
				hdr = []string{"Authorization", "Bearer " + c.key}
			}
			status, body := a.do(t, c.method, c.path, "application/json", c.body, hdr...)
			if status != c.status {
				t.Fatalf("status = %d, want %d (%s)", status, c.status, body)
			}
		})
	}
}

func TestNewApp_refusesOpenNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.1.2.3:8080"} {
		_, err := NewApp(t.Context(), Config{Addr: addr, DB: t.TempDir() + "/x.db", Policy: api.DefaultPolicy()})
		if err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("NewApp(%s) err = %v, want a refusal", addr, err)
		}
	}
}

// TestAPI_numericTimestamp checks that a Unix-seconds timestamp is refused
// with a message that names the field and the format to use.
func TestAPI_numericTimestamp(t *testing.T) {
	a := startApp(t, nil)
	status, body := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(`{"user_id":"u","item_id":"i","timestamp":1700000000}`))
	var out api.ErrorOut
	if err := json.Unmarshal(body, &out); err != nil || status != http.StatusBadRequest {
		t.Fatalf("status %d body %s, want 400 with the envelope", status, body)
	}
	if len(out.Error.Details) != 1 || out.Error.Details[0].Field != "timestamp" || !strings.Contains(out.Error.Details[0].Problem, "RFC 3339") {
		t.Fatalf("error %+v, want field timestamp with a problem naming RFC 3339", out.Error)
	}
	if c := a.counts(t); c.Events != 0 {
		t.Fatalf("events = %d after a rejected body", c.Events)
	}
}
