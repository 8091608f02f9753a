package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/handlers"
	"github.com/recsys-engine/recsys/storage"
)

// testApp is a running App on a loopback port with a temporary database.
type testApp struct {
	*App
	URL  string
	stop func()
}

// startApp starts an App on 127.0.0.1:0 with a fresh database until the
// test ends; edit changes the config first.
func startApp(tb testing.TB, edit func(*Config)) *testApp {
	tb.Helper()
	c := Config{Addr: "127.0.0.1:0", DB: filepath.Join(tb.TempDir(), "app.db"),
		Policy: api.DefaultPolicy(), Limits: handlers.DefaultLimits}
	if edit != nil {
		edit(&c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	app, err := NewApp(ctx, c)
	if err != nil {
		cancel()
		tb.Fatalf("NewApp: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	a := &testApp{App: app, URL: "http://" + app.Addr()}
	a.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
		if err := app.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	tb.Cleanup(a.stop)
	return a
}

// stopNow shuts the app down before the test ends (to reopen its database).
func (a *testApp) stopNow(tb testing.TB) { a.stop() }

// do sends a request and returns the status and body.
func (a *testApp) do(tb testing.TB, method, path, contentType string, body []byte, header ...string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, a.URL+path, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k := 0; k+1 < len(header); k += 2 {
		req.Header.Set(header[k], header[k+1])
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, b
}

// postJSON posts v as JSON and decodes the answer into out (if non-nil).
func (a *testApp) postJSON(tb testing.TB, path string, v any, out any) int {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	status, body := a.do(tb, http.MethodPost, path, "application/json", b)
	if out != nil && status < 300 {
		if err := json.Unmarshal(body, out); err != nil {
			tb.Fatalf("decoding %s: %v", body, err)
		}
	}
	return status
}

// getJSON gets path and decodes a 2xx answer into out.
func (a *testApp) getJSON(tb testing.TB, path string, out any) int {
	tb.Helper()
	status, body := a.do(tb, http.MethodGet, path, "", nil)
	if out != nil && status < 300 {
		if err := json.Unmarshal(body, out); err != nil {
			tb.Fatalf("decoding %s: %v", body, err)
		}
	}
	return status
}

func (a *testApp) counts(tb testing.TB) api.Counts {
	tb.Helper()
	c, err := a.store.Counts(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestNewApp_failureReleases makes NewApp fail at each step after the store
// is open and checks that it left nothing held: the database reopens at
// once (bbolt's file lock would make storage.Open time out) and the API
// address binds again.
func TestNewApp_failureReleases(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	busy := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln.Addr().String()
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		edit func(t *testing.T, c *Config)
		want string
		// addrHeld: the case holds the API address itself, so it cannot
		// be bound again.
		addrHeld bool
	}{
		{"demo past the size cap", context.Background(), func(t *testing.T, c *Config) { c.Demo, c.MaxDBSize = true, 96<<10 }, "cannot grow", false},
		{"demo cancelled", cancelled, func(t *testing.T, c *Config) { c.Demo = true }, "context canceled", false},
		{"recover cancelled", cancelled, func(t *testing.T, c *Config) {}, "context canceled", false},
		{"address in use", context.Background(), func(t *testing.T, c *Config) { c.Addr = busy(t) }, "--addr: ", true},
		{"pprof address in use", context.Background(), func(t *testing.T, c *Config) { c.PprofAddr = busy(t) }, "--pprof: ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Addr: freeAddr(t), DB: filepath.Join(t.TempDir(), "app.db"),
				Policy: api.DefaultPolicy(), Limits: handlers.DefaultLimits}
			tc.edit(t, &c)
			a, err := NewApp(tc.ctx, c)
			if err == nil {
				a.Close()
				t.Fatal("NewApp succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewApp: %v, want an error containing %q", err, tc.want)
			}
			st, err := storage.Open(c.DB, storage.Options{Timeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatalf("the failed NewApp left the database held: %v", err)
			}
			st.Close()
			if !tc.addrHeld {
				ln, err := net.Listen("tcp", c.Addr)
				if err != nil {
					t.Fatalf("the failed NewApp left %s bound: %v", c.Addr, err)
				}
				ln.Close()
			}
		})
	}
}

// TestApp_Close: Close releases the listener and the database whether Run
// ran or not, and a second Close does nothing and reports no error.
func TestApp_Close(t *testing.T) {
	for _, run := range []string{"without Run", "after Run"} {
		t.Run(run, func(t *testing.T) {
			c := Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "app.db"),
				Policy: api.DefaultPolicy(), Limits: handlers.DefaultLimits, PprofAddr: "127.0.0.1:0"}
			a, err := NewApp(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			addrs := []string{a.Addr(), a.pprofLn.Addr().String()}
			if run == "after Run" {
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- a.Run(ctx) }()
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("Run: %v", err)
				}
			}
			for k := range 2 {
				if err := a.Close(); err != nil {
					t.Errorf("Close %d: %v", k+1, err)
				}
			}
			st, err := storage.Open(c.DB, storage.Options{Timeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatalf("the database is still held after Close: %v", err)
			}
			st.Close()
			for _, addr := range addrs {
				ln, err := net.Listen("tcp", addr)
				if err != nil {
					t.Fatalf("%s is still bound after Close: %v", addr, err)
				}
				ln.Close()
			}
		})
	}
}
