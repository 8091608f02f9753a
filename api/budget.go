package api

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ServeBudget bounds what a recommendation request to the active model may
// cost, in CPU milliseconds of one core (ServingCost): the mean and the
// p99. A zero bound is no bound. Training jobs that choose the active
// model keep to it (docs/design.md#jobs); activating a model over it by
// hand is allowed, with a warning.
type ServeBudget struct {
	MeanMS float64
	P99MS  float64
}

// DefaultServeBudget is serve's --serve-budget: 2,000 requests/s at a
// mean of 0.6 ms is 1.2 of 2 cores, the load at which the load tests kept
// p99 ≤ 10 ms (docs/performance.md#serving-cost-per-model).
var DefaultServeBudget = ServeBudget{MeanMS: 0.6, P99MS: 5}

// ParseServeBudget reads a budget written as comma-separated key=duration
// pairs, the keys mean and p99 and the durations Go's ("0.6ms", "600us",
// "5ms"): "mean=0.6ms,p99=5ms". A key left out is not bounded; "off" (or
// "") bounds nothing.
func ParseServeBudget(s string) (ServeBudget, error) {
	var b ServeBudget
	s = strings.TrimSpace(s)
	if s == "" || s == "off" {
		return b, nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		key = strings.TrimSpace(key)
		if !ok || (key != "mean" && key != "p99") {
			return ServeBudget{}, fmt.Errorf("%q is not mean=DURATION or p99=DURATION (for example mean=0.6ms,p99=5ms, or off)", part)
		}
		if seen[key] {
			return ServeBudget{}, fmt.Errorf("%s is given twice", key)
		}
		seen[key] = true
		d, err := time.ParseDuration(strings.TrimSpace(val))
		if err != nil || d <= 0 {
			return ServeBudget{}, fmt.Errorf("%s=%s: want a positive duration such as 0.6ms or 600us", key, val)
		}
		ms := float64(d) / float64(time.Millisecond)
		if key == "mean" {
			b.MeanMS = ms
		} else {
			b.P99MS = ms
		}
	}
	return b, nil
}

// String writes b as ParseServeBudget reads it: "mean=0.6ms,p99=5ms", or
// "off" when it bounds nothing.
func (b ServeBudget) String() string {
	var parts []string
	if b.MeanMS > 0 {
		parts = append(parts, "mean="+strconv.FormatFloat(b.MeanMS, 'f', -1, 64)+"ms")
	}
	if b.P99MS > 0 {
		parts = append(parts, "p99="+strconv.FormatFloat(b.P99MS, 'f', -1, 64)+"ms")
	}
	if len(parts) == 0 {
		return "off"
	}
	return strings.Join(parts, ",")
}

// OverBudget is a model whose measured serving cost exceeds the budget:
// its mean and p99 in CPU ms per request, the budget, and Factor, the
// larger of the ratios of a measure to its bound (above 1).
type OverBudget struct {
	Model  string  `json:"model"`
	MeanMS float64 `json:"mean_ms"`
	P99MS  float64 `json:"p99_ms"`
	Budget string  `json:"budget"`
	Factor float64 `json:"factor"`
}

// Check reports whether the model name with cost c is over b, and by how
// much. A cost not measured (nil) is within any budget: nothing says
// otherwise.
func (b ServeBudget) Check(name string, c *ServingCost) (OverBudget, bool) {
	if c == nil {
		return OverBudget{}, false
	}
	factor := 0.0
	if b.MeanMS > 0 {
		factor = c.MeanMS / b.MeanMS
	}
	if b.P99MS > 0 {
		factor = max(factor, c.P99MS/b.P99MS)
	}
	if factor <= 1 {
		return OverBudget{}, false
	}
	return OverBudget{Model: name, MeanMS: c.MeanMS, P99MS: c.P99MS, Budget: b.String(), Factor: factor}, true
}

// Warning is the warning for the model name with cost c, "" when it is
// within b.
func (b ServeBudget) Warning(name string, c *ServingCost) string {
	o, over := b.Check(name, c)
	if !over {
		return ""
	}
	return fmt.Sprintf("model %s is over the serving budget %s: a request costs a mean of %.3g ms and a p99 of %.3g ms of CPU (%.1f× the budget)",
		name, o.Budget, o.MeanMS, o.P99MS, o.Factor)
}
