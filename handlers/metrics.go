package handlers

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"recsys/api"
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
		gauge := func(name, help string, pick func(api.Counts) int64) {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				c, err := stats.Counts(ctx)
				if err != nil {
					return -1
				}
				return float64(pick(c))
			}))
		}
		gauge("recsys_stored_interactions", "Distinct (user, item) pairs stored.", func(c api.Counts) int64 { return c.Interactions })
		gauge("recsys_stored_events", "Events accepted, repeats included.", func(c api.Counts) int64 { return c.Events })
		gauge("recsys_stored_users", "Users stored.", func(c api.Counts) int64 { return c.Users })
		gauge("recsys_stored_items", "Items stored.", func(c api.Counts) int64 { return c.Items })
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
