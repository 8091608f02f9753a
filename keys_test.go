package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// TestNewApp_keyRules: serve refuses keys that do not protect, before it
// opens the database or the port, with an error naming the flag and its
// environment variable: a key shorter than 16 bytes, one with white space
// at an end (no header can carry it), and an admin key equal to the
// application key. 16 bytes is enough.
func TestNewApp_keyRules(t *testing.T) {
	const k15, k16 = "0123456789abcde", "0123456789abcdef"
	for _, c := range []struct {
		name       string
		app, admin string
		want       []string // substrings of the error; none: the start succeeds
	}{
		{"one-character app key", "k", testAdminKey, []string{"--app-key", "RECSYS_APP_KEY", "1 bytes", "at least 16 bytes"}},
		{"15-byte admin key", testAppKey, k15, []string{"--admin-key", "RECSYS_ADMIN_KEY", "15 bytes"}},
		{"short app key alone", k15, "", []string{"--app-key"}},
		{"short admin key alone", "", "x", []string{"--admin-key"}},
		{"identical keys", testAppKey, testAppKey, []string{"--app-key and --admin-key", "RECSYS_APP_KEY", "RECSYS_ADMIN_KEY", "must differ"}},
		{"app key with a trailing space", k16 + " ", testAdminKey, []string{"--app-key", "white space"}},
		{"admin key with a leading tab", testAppKey, "\t" + k16, []string{"--admin-key", "white space"}},
		{"16-byte keys", k16, "fedcba9876543210", nil},
		{"16-byte app key alone", k16, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "keys.db")
			app, err := NewApp(t.Context(), Config{Addr: "127.0.0.1:0", DB: db, Policy: api.DefaultPolicy(), AppKey: c.app, AdminKey: c.admin})
			if c.want == nil {
				if err != nil {
					t.Fatalf("NewApp: %v", err)
				}
				app.Close()
				return
			}
			if err == nil {
				app.Close()
				t.Fatalf("NewApp started, want an error saying %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, k := range []string{c.app, c.admin} {
				if k = strings.TrimSpace(k); len(k) >= 4 && strings.Contains(err.Error(), k) {
					t.Errorf("error %q shows a key", err)
				}
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("a refused start left a database: %v", err)
			}
		})
	}
}

// TestServe_keyRulesFromFlagsAndEnv: the same rules through `recsys
// serve`, keys from the flags and from the environment: exit 1 with the
// error as the last line of stderr.
func TestServe_keyRulesFromFlagsAndEnv(t *testing.T) {
	serve := func(t *testing.T, args ...string) (int, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db")}, args...)
		// A server that starts (which it must not) is stopped after a while.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		code := runMain(ctx, args, &stdout, &stderr)
		return code, lastLine(stderr.String())
	}
	if code, last := serve(t, "--app-key", "short"); code != 1 || !strings.Contains(last, "--app-key (RECSYS_APP_KEY) is 5 bytes") {
		t.Errorf("--app-key short: exit %d, %q", code, last)
	}
	if code, last := serve(t, "--app-key", testAppKey, "--admin-key", testAppKey); code != 1 || !strings.Contains(last, "must differ") {
		t.Errorf("equal keys: exit %d, %q", code, last)
	}
	t.Setenv("RECSYS_ADMIN_KEY", "tiny")
	if code, last := serve(t); code != 1 || !strings.Contains(last, "--admin-key (RECSYS_ADMIN_KEY) is 4 bytes") {
		t.Errorf("RECSYS_ADMIN_KEY=tiny: exit %d, %q", code, last)
	}
}

// TestErasure_appKey: on a server with both keys, the application key
// erases a user's pair and a whole user (each gone afterwards, another
// user untouched), while deleting an item and the admin routes stay the
// admin key's. On a server with only an application key, erasure works
// with it and item deletes are admin_disabled.
func TestErasure_appKey(t *testing.T) {
	seed := func(t *testing.T, a *testApp, key string) {
		t.Helper()
		evs := `{"interactions":[{"user_id":"u1","item_id":"i1"},{"user_id":"u1","item_id":"i2"},{"user_id":"u2","item_id":"i1"}]}`
		if status, b := a.do(t, "POST", "/interactions", "application/json", []byte(evs), "Authorization", "Bearer "+key); status != http.StatusCreated {
			t.Fatalf("seeding: %d %s", status, b)
		}
	}
	send := func(t *testing.T, a *testApp, method, path, key string) (int, api.ErrorOut) {
		t.Helper()
		status, b := a.do(t, method, path, "", nil, "X-API-Key", key)
		var out api.ErrorOut
		if status >= 400 {
			mustUnmarshal(t, b, &out)
		}
		return status, out
	}
	want := func(t *testing.T, what string, status int, out api.ErrorOut, wantStatus int, wantCode string) {
		t.Helper()
		if status != wantStatus || out.Error.Code != wantCode {
			t.Errorf("%s: %d %q (%s), want %d %q", what, status, out.Error.Code, out.Error.Message, wantStatus, wantCode)
		}
	}

	t.Run("both keys", func(t *testing.T) {
		a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = testAppKey, testAdminKey })
		seed(t, a, testAppKey)
		status, out := send(t, a, "DELETE", "/users/u1/interactions/i1", testAppKey)
		want(t, "erase a pair with the app key", status, out, http.StatusNoContent, "")
		var hist api.HistoryOut
		_, b := a.do(t, "GET", "/users/u1/interactions", "", nil, "X-API-Key", testAppKey)
		mustUnmarshal(t, b, &hist)
		if len(hist.Interactions) != 1 || hist.Interactions[0].ItemID != "i2" {
			t.Errorf("u1's history after erasing (u1, i1): %+v, want only i2", hist.Interactions)
		}
		status, out = send(t, a, "DELETE", "/users/u1", testAppKey)
		want(t, "erase a user with the app key", status, out, http.StatusNoContent, "")
		status, out = send(t, a, "GET", "/users/u1", testAppKey)
		want(t, "the erased user", status, out, http.StatusNotFound, api.CodeNotFound)
		status, out = send(t, a, "GET", "/users/u2", testAppKey)
		want(t, "another user", status, out, http.StatusOK, "")

		status, out = send(t, a, "DELETE", "/items/i1", testAppKey)
		want(t, "delete an item with the app key", status, out, http.StatusForbidden, api.CodeForbidden)
		if !strings.Contains(out.Error.Message, "admin key") {
			t.Errorf("item delete with the app key: %q does not name the admin key", out.Error.Message)
		}
		status, out = send(t, a, "GET", "/items/i1", testAppKey)
		want(t, "the item the app key could not delete", status, out, http.StatusOK, "")
		status, out = send(t, a, "GET", "/admin/jobs", testAppKey)
		want(t, "an admin route with the app key", status, out, http.StatusForbidden, api.CodeForbidden)
		status, out = send(t, a, "DELETE", "/users/u2", "")
		want(t, "erasure without a key", status, out, http.StatusUnauthorized, api.CodeUnauthorized)
		status, out = send(t, a, "DELETE", "/items/i1", testAdminKey)
		want(t, "delete an item with the admin key", status, out, http.StatusNoContent, "")
	})
	t.Run("app key only", func(t *testing.T) {
		a := startApp(t, func(c *Config) { c.AppKey = testAppKey })
		seed(t, a, testAppKey)
		status, out := send(t, a, "DELETE", "/users/u2", testAppKey)
		want(t, "erase a user with the app key", status, out, http.StatusNoContent, "")
		status, out = send(t, a, "GET", "/users/u2", testAppKey)
		want(t, "the erased user", status, out, http.StatusNotFound, api.CodeNotFound)
		status, out = send(t, a, "DELETE", "/items/i1", testAppKey)
		want(t, "delete an item with no admin key configured", status, out, http.StatusForbidden, api.CodeAdminDisabled)
	})
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
}
