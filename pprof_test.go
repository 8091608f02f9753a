package main

import (
	"io"
	"net/http"
	"testing"
)

// TestServe_pprof: --pprof serves the runtime profiles on their own
// loopback listener, and a non-loopback address is refused.
func TestServe_pprof(t *testing.T) {
	if _, err := parseServeFlags([]string{"--pprof", "0.0.0.0:6060"}, io.Discard); err == nil {
		t.Error("--pprof 0.0.0.0:6060 accepted")
	}
	a := startApp(t, func(c *Config) { c.PprofAddr = "127.0.0.1:0" })
	resp, err := http.Get("http://" + a.pprofLn.Addr().String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("pprof: status %d", resp.StatusCode)
	}
	if status, _ := a.do(t, http.MethodGet, "/debug/pprof/cmdline", "", nil); status != http.StatusNotFound {
		t.Errorf("the API serves profiles: status %d", status)
	}
}
