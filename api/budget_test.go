package api

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseServeBudget(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want ServeBudget
		str  string
	}{
		{"mean=0.6ms,p99=5ms", ServeBudget{MeanMS: 0.6, P99MS: 5}, "mean=0.6ms,p99=5ms"},
		{" p99 = 10ms , mean=600us ", ServeBudget{MeanMS: 0.6, P99MS: 10}, "mean=0.6ms,p99=10ms"},
		{"p99=1s", ServeBudget{P99MS: 1000}, "p99=1000ms"},
		{"mean=1ns", ServeBudget{MeanMS: 1e-6}, "mean=0.000001ms"},
		{"off", ServeBudget{}, "off"},
		{"", ServeBudget{}, "off"},
	} {
		got, err := ParseServeBudget(tc.spec)
		if err != nil || got != tc.want {
			t.Errorf("ParseServeBudget(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
			continue
		}
		if s := got.String(); s != tc.str {
			t.Errorf("String of %q = %q, want %q", tc.spec, s, tc.str)
		}
	}
	for _, bad := range []string{"mean", "mean=", "mean=0.6", "mean=-1ms", "mean=0s", "p50=1ms", "mean=1ms,mean=2ms", "mean=1ms,", "0.6ms"} {
		if b, err := ParseServeBudget(bad); err == nil {
			t.Errorf("ParseServeBudget(%q) = %+v, want an error", bad, b)
		}
	}
	if s := DefaultServeBudget.String(); s != "mean=0.6ms,p99=5ms" {
		t.Errorf("the default budget writes as %q", s)
	}
}

// A cost is over a budget when either measure is over its bound, by the
// larger ratio; an unmeasured cost and an absent bound are within.
func TestServeBudget_Check(t *testing.T) {
	b := ServeBudget{MeanMS: 0.5, P99MS: 4}
	for _, tc := range []struct {
		cost   *ServingCost
		over   bool
		factor float64
	}{
		{nil, false, 0},
		{&ServingCost{MeanMS: 0.5, P99MS: 4}, false, 0},
		{&ServingCost{MeanMS: 1, P99MS: 2}, true, 2},
		{&ServingCost{MeanMS: 0.1, P99MS: 12}, true, 3},
		{&ServingCost{MeanMS: 1.5, P99MS: 8}, true, 3},
	} {
		o, over := b.Check("m", tc.cost)
		if over != tc.over || o.Factor != tc.factor {
			t.Errorf("Check(%+v) = %+v, %v; want over %v by %g", tc.cost, o, over, tc.over, tc.factor)
		}
		if over && (o.Model != "m" || o.Budget != "mean=0.5ms,p99=4ms" || o.MeanMS != tc.cost.MeanMS || o.P99MS != tc.cost.P99MS) {
			t.Errorf("Check(%+v) = %+v", tc.cost, o)
		}
		if w := b.Warning("m", tc.cost); (w != "") != tc.over || over && !strings.Contains(w, "mean=0.5ms,p99=4ms") {
			t.Errorf("Warning(%+v) = %q", tc.cost, w)
		}
	}
	if _, over := (ServeBudget{P99MS: 1}).Check("m", &ServingCost{MeanMS: 100, P99MS: 1}); over {
		t.Error("a budget without a mean bound is over on the mean")
	}
	if _, over := (ServeBudget{}).Check("m", &ServingCost{MeanMS: 100, P99MS: 100}); over {
		t.Error("no budget is over")
	}
}

// A model record written before the serving cost was measured reads as
// not measured.
func TestModelInfo_withoutServingCost(t *testing.T) {
	var info ModelInfo
	if err := json.Unmarshal([]byte(`{"name":"itemknn","version":"v000001","params":{"k":50},"validation":{"adg":0.3},"train_seconds":1,"bytes":10,"active":true}`), &info); err != nil {
		t.Fatal(err)
	}
	if info.ServingCost != nil {
		t.Fatalf("serving cost %+v, want none", info.ServingCost)
	}
	b, err := json.Marshal(info)
	if err != nil || strings.Contains(string(b), "serving_cost") {
		t.Fatalf("written back as %s (%v), want no serving_cost", b, err)
	}
}

// FuzzParseServeBudget feeds arbitrary --serve-budget specs to the parser:
// it returns an error or a budget with no negative bound that survives a
// round trip through String.
func FuzzParseServeBudget(f *testing.F) {
	for _, s := range []string{"mean=0.6ms,p99=5ms", "off", "", "mean=1ns", "p99=2562047h", "mean=1e3ms", "mean=0.6ms,", "=,="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		b, err := ParseServeBudget(spec)
		if err != nil {
			return
		}
		if b.MeanMS < 0 || b.P99MS < 0 {
			t.Fatalf("%q gives %+v", spec, b)
		}
		c, err := ParseServeBudget(b.String())
		if err != nil || c.String() != b.String() {
			t.Fatalf("round trip of %q: %q then %+v (%v)", spec, b.String(), c, err)
		}
	})
}
