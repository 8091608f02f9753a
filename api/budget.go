package api

import (
	"fmt"
	"math"
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

// TrainBudget bounds a training job (docs/design.md#jobs): Time is the wall
// time within which its auto additions (Job.Additions) must be predicted
// to finish, counted from the job's start; Memory the predicted peak
// memory above which no model is fitted, named or not. A zero bound is no
// bound.
type TrainBudget struct {
	Time   time.Duration
	Memory int64
}

// DefaultTrainTime is serve's and train's --train-budget.
const DefaultTrainTime = 30 * time.Minute

// ParseTrainTime reads a training time budget: a positive Go duration
// ("30m", "2h"), or 0 or off for none.
func ParseTrainTime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration such as 30m or 2h, or 0 or off", s)
	}
	return d, nil
}

// FormatTrainTime writes d as ParseTrainTime reads it: "30m", "1h30m",
// "45s", or "off" for 0.
func FormatTrainTime(d time.Duration) string {
	if d == 0 {
		return "off"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// byteUnits are the units ParseByteSize reads, longest first.
var byteUnits = []struct {
	name string
	size float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"b", 1},
}

// ParseByteSize reads a size in bytes: a number with an optional unit, B,
// KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (of 1000), in any
// case ("12GiB", "1.5 GiB", "512MiB", "4000000000"), or 0 or off for none.
func ParseByteSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "off" || t == "0" {
		return 0, nil
	}
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.name) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.name)), u.size
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*mult >= 1<<62 || v*mult < 1 || mult == 1 && v != math.Trunc(v) {
		return 0, fmt.Errorf("%q is not a size such as 12GiB, 512MiB or 4000000000, or 0 or off", strings.TrimSpace(s))
	}
	return int64(v * mult), nil
}

// FormatBytes writes n in the largest binary unit that keeps it at least
// 1, with one decimal when it has one: "12 GiB", "7.3 TiB", "512 B".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[u]
}
