package handlers

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/recsys-engine/recsys/api"
)

type metrics struct {
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	internalErrors prometheus.Counter
	handler        http.Handler
}

func newMetrics(reg *prometheus.Registry, stats api.StatsService) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "recsys_http_requests_total", Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "recsys_http_request_duration_seconds",
			Help:    "HTTP request latency by route and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route", "method"}),
		internalErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "recsys_internal_errors_total", Help: "Requests that failed with an internal error.",
		}),
	}
	reg.MustRegister(m.requests, m.latency, m.internalErrors)
	if stats != nil {
		reg.MustRegister(countsCollector{stats})
	}
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// instrument counts requests and observes latency per route pattern (never
// per raw path: ids would explode the label space).
func (h *handler) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := routePattern(r)
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		h.metrics.requests.WithLabelValues(route, r.Method, strconv.Itoa(status)).Inc()
		h.metrics.latency.WithLabelValues(route, r.Method).Observe(time.Since(start).Seconds())
	})
}

// countsCollector exports the store's counts as gauges, read once a scrape
// so that the four come from one moment (and one fold of the unapplied
// tail, which a read of the counts folds first).
type countsCollector struct{ stats api.StatsService }

var countsDescs = [...]struct {
	desc *prometheus.Desc
	pick func(api.Counts) int64
}{
	{prometheus.NewDesc("recsys_stored_interactions", "Distinct (user, item) pairs stored.", nil, nil), func(c api.Counts) int64 { return c.Interactions }},
	{prometheus.NewDesc("recsys_stored_events", "Events accepted, repeats included.", nil, nil), func(c api.Counts) int64 { return c.Events }},
	{prometheus.NewDesc("recsys_stored_users", "Users stored.", nil, nil), func(c api.Counts) int64 { return c.Users }},
	{prometheus.NewDesc("recsys_stored_items", "Items stored.", nil, nil), func(c api.Counts) int64 { return c.Items }},
}

func (countsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range countsDescs {
		ch <- d.desc
	}
}

// Collect reports −1 for every count the store could not read within a
// second.
func (cc countsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := cc.stats.Counts(ctx)
	for _, d := range countsDescs {
		v := float64(d.pick(c))
		if err != nil {
			v = -1
		}
		ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, v)
	}
}
