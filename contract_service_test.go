package main

import (
	"testing"
)

// Service routes, on a keyless server that reports ready while it serves
// popularity.
func testContractService(t *testing.T) {
	s := startContractServer(t, func(cfg *Config) { cfg.AllowFallback = true })
	const protobuf = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
	for _, ex := range []contractCase{
		{name: "healthz", method: "GET", path: "/healthz", want: 200},
		{name: "readyz", method: "GET", path: "/readyz", want: 200},
		{name: "version", method: "GET", path: "/version", want: 200},
		{name: "metrics", method: "GET", path: "/metrics", want: 200},
		{name: "metrics protobuf", method: "GET", path: "/metrics", header: map[string]string{"Accept": protobuf}, want: 200},
		{name: "openapi", method: "GET", path: "/openapi.yaml", want: 200},
		{name: "dashboard", method: "GET", path: "/", want: 200},
		{name: "API reference", method: "GET", path: "/docs", want: 200},
		{name: "stats", method: "GET", path: "/stats", want: 200},
		{name: "stats with X-API-Key", method: "GET", path: "/stats", header: map[string]string{"X-API-Key": "k"}, want: 200},
		{name: "stats days 7", method: "GET", path: "/stats?days=7", want: 200},
		{name: "stats days 0", method: "GET", path: "/stats?days=0", want: 400, invalid: true, field: "days"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
}
