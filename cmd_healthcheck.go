package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// runHealthcheck asks a server whether it is ready and exits 0 when it
// answers 2xx, 1 otherwise: the probe a container image without curl
// runs (Containerfile's HEALTHCHECK).
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", defaultHealthURL(envOr("RECSYS_ADDR", "127.0.0.1:8080")), "the URL to GET; healthy when it answers 2xx (default: /readyz on the loopback side of RECSYS_ADDR)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("healthcheck takes no arguments, got %q", fs.Args())
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("--url: %w", err)
	}
	// No proxy: the probe asks the server beside it.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("healthcheck: GET %s: %s: %s", *url, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(stdout, "%s: %s\n", *url, resp.Status)
	return nil
}

// defaultHealthURL is the readiness URL of a server listening on addr,
// asked over loopback: a wildcard or empty host is 127.0.0.1 (or ::1).
func defaultHealthURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://127.0.0.1:8080/readyz"
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}
