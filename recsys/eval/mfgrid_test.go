package eval

import (
	"maps"
	"slices"
	"testing"
)

// TestParseExtra: each model named gets the product of its keys' values;
// the others keep the base grid; malformed settings are errors.
func TestParseExtra(t *testing.T) {
	base := map[string][]map[string]float64{"bpr": {{"lambda": 1}}, "ials": {{"lambda": 9}}}
	got, err := ParseExtra("ials.lambda=0.1,1; ials.alpha0=0.5;ease.lambda=300", base)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]map[string]float64{
		"bpr":  {{"lambda": 1}},
		"ials": {{"alpha0": 0.5, "lambda": 0.1}, {"alpha0": 0.5, "lambda": 1}},
		"ease": {{"lambda": 300}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for model, w := range want {
		if !slices.EqualFunc(got[model], w, maps.Equal) {
			t.Errorf("%s: got %v, want %v", model, got[model], w)
		}
	}
	if len(base["ials"]) != 1 || base["ials"][0]["lambda"] != 9 {
		t.Errorf("base grid changed: %v", base)
	}
	for _, bad := range []string{"ials=1", "lambda=1", "ials.lambda=x", ".lambda=1", "ials.=1"} {
		if _, err := ParseExtra(bad, base); err == nil {
			t.Errorf("ParseExtra(%q) accepted", bad)
		}
	}
}
