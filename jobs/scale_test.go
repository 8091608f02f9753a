package jobs

import (
	"maps"
	"reflect"
	"testing"
)

// The scale rule sizes the matrix factorisations' epochs by the data and
// stops their grid extension above ScalePositives, and leaves every model
// as it was at and below it (MovieLens 100K and Last.fm have ~10⁵).
func TestScaleTuning(t *testing.T) {
	for _, name := range []string{"bpr", "wrmf", "ials", "mfauc", "ease", "kunn", "febr"} {
		for _, n := range []int{100_000, ScalePositives} {
			tuning := DefaultTrainOptions.tuning()
			want := DefaultTrainOptions.tuning()
			if scaleTuning(name, n, &tuning) || !reflect.DeepEqual(tuning, want) {
				t.Fatalf("%s at %d positives: the rule applied", name, n)
			}
		}
	}
	// bpr: 100 epochs × 500k/|X|, rounded up, at least 5.
	for _, c := range []struct{ n, bpr, wrmf, mfauc int }{
		{ScalePositives + 1, 100, 15, 30}, // ⌈99.99998⌉
		{1_000_000, 50, 8, 15},
		{5_000_000, 10, 5, 5},
		{18_000_000, 5, 5, 5},
	} {
		for name, want := range map[string]int{"bpr": c.bpr, "wrmf": c.wrmf, "mfauc": c.mfauc} {
			tuning := DefaultTrainOptions.tuning()
			if !scaleTuning(name, c.n, &tuning) {
				t.Fatalf("%s at %d positives: the rule did not apply", name, c.n)
			}
			if tuning.Extend >= 0 {
				t.Fatalf("%s at %d positives: Extend %d, want none", name, c.n, tuning.Extend)
			}
			settings := tuning.Grid.Extra[name]
			if wantLen := max(1, len(DefaultTrainOptions.MF[name])); len(settings) != wantLen {
				t.Fatalf("%s: %d settings, want %d", name, len(settings), wantLen)
			}
			for k, s := range settings {
				if s["epochs"] != float64(want) {
					t.Fatalf("%s at %d positives, setting %d: epochs %v, want %d", name, c.n, k, s["epochs"], want)
				}
				if defs := DefaultTrainOptions.MF[name]; len(defs) > 0 {
					rest := maps.Clone(s)
					delete(rest, "epochs")
					if !maps.Equal(rest, defs[k]) {
						t.Fatalf("%s setting %d: %v, want %v and epochs", name, k, s, defs[k])
					}
				}
			}
		}
	}
	// The defaults are not mutated, and an epochs set in the grid is kept.
	for name, settings := range DefaultTrainOptions.MF {
		for _, s := range settings {
			if _, ok := s["epochs"]; ok {
				t.Fatalf("%s: the rule wrote epochs into DefaultTrainOptions", name)
			}
		}
	}
	opts := DefaultTrainOptions
	opts.MF = map[string][]map[string]float64{"wrmf": {{"epochs": 40}}}
	tuning := opts.tuning()
	scaleTuning("wrmf", 20_000_000, &tuning)
	if e := tuning.Grid.Extra["wrmf"][0]["epochs"]; e != 40 {
		t.Fatalf("a set epochs became %v", e)
	}
	if opts.tuning().Extend != 0 {
		t.Fatal("the rule changed the options' Extend")
	}
}
