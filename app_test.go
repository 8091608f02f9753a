package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"recsys/api"
	"recsys/handlers"
)

// testApp is a running App on a loopback port with a temporary database.
type testApp struct {
	*App
	URL  string
	stop func()
}

// startApp starts an App on 127.0.0.1:0; edit changes the config first.
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
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	a := &testApp{App: app, URL: "http://" + app.Addr()}
	a.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
		app.Close()
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
