package rules

import (
	"errors"
	"testing"
)

// FuzzCompileMatch compiles arbitrary text and runs what compiles on an
// item: compiling either succeeds or gives an *Error with a position
// inside the text, and running never panics.
func FuzzCompileMatch(f *testing.F) {
	for _, s := range []string{
		`"War" in categories`, `labels.stock == "0"`, `features.price < 10 and age_days > 1`,
		`id matches "^m[0-9]+$"`, `categories[3] == "x"`, `float(labels.p) > 1`, `1 +`,
		`all(categories, # != "x")`, "true and\n nope", `labels["a"] + "b" == "cb"`, `(`,
		`int(features.x) / 0 == 1`, `map(1..100, # * 2)[5] == 12`, `none(categories, {# == "a"})`,
	} {
		f.Add(s)
	}
	item := &Item{ID: "m1", Categories: []string{"a", "War"}, Labels: map[string]string{"stock": "0", "p": "x", "a": "c"},
		Features: map[string]float64{"price": 5, "x": 2}, AgeDays: 2}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Compile(src)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Compile(%q) = %T %v, want *Error", src, err, err)
			}
			if pe.Line < 1 || pe.Column < 1 {
				t.Fatalf("Compile(%q): position %d:%d", src, pe.Line, pe.Column)
			}
			return
		}
		var e Evaluator
		if _, err := e.Match(p, item); err != nil {
			return
		}
		if _, err := e.Match(p, &Item{}); err != nil {
			return
		}
	})
}
