package online

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/recsys-engine/recsys/api"
)

// metrics are the online counters of /metrics: this process's share of
// what GET /admin/online reports from the store.
type metrics struct {
	lists, impressions, clicks, conversions *prometheus.CounterVec
	drops, prunes                           prometheus.Counter
	attributionErrors                       prometheus.Counter
}

func newMetrics(reg *prometheus.Registry) *metrics {
	vec := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"model"})
	}
	m := &metrics{
		lists:       vec("recsys_online_lists_total", "Recommendation lists written to the impression log, by model."),
		impressions: vec("recsys_online_impressions_total", "Items shown in the lists written to the impression log, by model."),
		clicks:      vec("recsys_online_clicks_total", "Shown items credited with a positive event, by model."),
		conversions: vec("recsys_online_conversions_total", "Shown items credited with a conversion event, by model."),
		drops: prometheus.NewCounter(prometheus.CounterOpts{Name: "recsys_online_impressions_dropped_total",
			Help: "Lists not recorded because the impression queue was full or its write failed."}),
		prunes: prometheus.NewCounter(prometheus.CounterOpts{Name: "recsys_online_lists_pruned_total",
			Help: "Lists deleted from the impression log after the retention (their counts stay in /admin/online)."}),
		attributionErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "recsys_online_attribution_errors_total",
			Help: "Event batches stored but not attributed because the attribution failed."}),
	}
	if reg != nil {
		reg.MustRegister(m.lists, m.impressions, m.clicks, m.conversions, m.drops, m.prunes, m.attributionErrors)
	}
	return m
}

func (m *metrics) shown(model string, items int) {
	m.lists.WithLabelValues(model).Inc()
	m.impressions.WithLabelValues(model).Add(float64(items))
}

func (m *metrics) dropped(n int) { m.drops.Add(float64(n)) }

func (m *metrics) pruned(n int) { m.prunes.Add(float64(n)) }

func (m *metrics) credited(a api.Attributed) {
	if a.Click {
		m.clicks.WithLabelValues(a.Model).Inc()
	}
	if a.Conversion {
		m.conversions.WithLabelValues(a.Model).Inc()
	}
}
