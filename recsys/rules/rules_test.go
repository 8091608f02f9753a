package rules

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestCompile_errorPosition(t *testing.T) {
	tests := []struct {
		src          string
		line, column int
		msg          string
	}{
		{`1 +`, 1, 3, "unexpected token EOF"},
		{`foo > 1`, 1, 1, "unknown name foo"},
		{`"a" + 1 == 2`, 1, 5, "mismatched types string and int"},
		{"\"x\" in categories and\n  nope", 2, 3, "unknown name nope"},
		{`features.price`, 1, 1, "expected bool"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := Compile(tt.src)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Compile(%q) = %v, want an *Error", tt.src, err)
			}
			if pe.Line != tt.line || pe.Column != tt.column || !strings.Contains(pe.Message, tt.msg) {
				t.Errorf("got line %d column %d %q, want line %d column %d containing %q", pe.Line, pe.Column, pe.Message, tt.line, tt.column, tt.msg)
			}
		})
	}
}

func TestEvaluator_Match(t *testing.T) {
	item := &Item{ID: "m1", Categories: []string{"Drama", "War"},
		Labels:   map[string]string{"stock": "0", "brand": "acme", "price": "abc"},
		Features: map[string]float64{"price": 12.5}, AgeDays: 3.5}
	tests := []struct {
		src  string
		want bool
	}{
		{`"War" in categories`, true},
		{`"Comedy" in categories`, false},
		{`labels.stock == "0"`, true},
		{`labels.stock != "0"`, false},
		{`"colour" in labels`, false},
		{`labels.colour == ""`, true}, // a missing label is ""
		{`features.price > 12 and features.price < 13`, true},
		{`features.weight == 0`, true}, // a missing feature is 0
		{`age_days <= 3.5`, true},
		{`age_days < 3.5`, false},
		{`id startsWith "m"`, true},
		{`len(categories) == 2`, true},
		{`any(categories, # == "War") or labels.brand == "x"`, true},
	}
	var e Evaluator
	for _, tt := range tests {
		p, err := Compile(tt.src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.src, err)
		}
		got, err := e.Match(p, item)
		if err != nil || got != tt.want {
			t.Errorf("Match(%q) = %v, %v; want %v", tt.src, got, err, tt.want)
		}
	}
	p, err := Compile(`categories[2] == "x"`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Match(p, item); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("index out of range: got %v, want a run-time error", err)
	}
	p, err = Compile(`float(labels.price) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Match(p, item); err == nil {
		t.Error("float of a non-number label: want a run-time error")
	}
}

func TestCompile_limits(t *testing.T) {
	long := strings.Repeat("true and ", MaxExpressionBytes/9) + "true"
	if _, err := Compile(long); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("long expression: got %v", err)
	}
	if _, err := Compile("\xff"); err == nil {
		t.Error("invalid UTF-8 compiled")
	}
}

func TestCache_Compile(t *testing.T) {
	c := NewCache(2)
	a, err := c.Compile(`"a" in categories`)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Compile(`"a" in categories`); again != a {
		t.Error("the same text compiled twice")
	}
	if _, err := c.Compile(`1 +`); err == nil {
		t.Error("bad expression compiled")
	}
	if c.Len() != 1 {
		t.Errorf("Len = %d after a failed compile, want 1", c.Len())
	}
	for i := range 3 {
		if _, err := c.Compile(fmt.Sprintf("age_days > %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d, want the bound 2", c.Len())
	}
	if again, _ := c.Compile(`"a" in categories`); again == a {
		t.Error("the least recently used program was kept past the bound")
	}
}

// pool makes entries for items 0..n-1 scored n, n-1, ..., 1.
func pool(n int) []Entry {
	out := make([]Entry, n)
	for k := range out {
		out[k] = Entry{Item: uint32(k), Score: float64(n - k)}
	}
	return out
}

// matchSets matches rule r to the items listed for its name.
func matchSets(sets map[string][]uint32) func(r *Rule, item uint32) bool {
	return func(r *Rule, item uint32) bool { return slices.Contains(sets[r.Name], item) }
}

func items(p []Entry) []uint32 {
	out := make([]uint32, len(p))
	for k, e := range p {
		out[k] = e.Item
	}
	return out
}

func TestApply_actions(t *testing.T) {
	tests := []struct {
		name  string
		rules []*Rule
		sets  map[string][]uint32
		want  []uint32
	}{
		// Scores 5 4 3 2 1; item 3 boosted ×2 scores 4, ties item 1 (4)
		// and stays after it, being ranked later.
		{"boost ties keep order", []*Rule{{Name: "b", Action: Boost, Factor: 2}}, map[string][]uint32{"b": {3}}, []uint32{0, 1, 3, 2, 4}},
		// Item 4 ×3 scores 3, after item 2 (3); item 3 ×2.5 scores 5 = item 0's.
		{"two boosts", []*Rule{{Name: "b", Action: Boost, Factor: 3}, {Name: "c", Action: Boost, Factor: 2.5}}, map[string][]uint32{"b": {4}, "c": {3}}, []uint32{0, 3, 1, 2, 4}},
		{"boost below 1", []*Rule{{Name: "b", Action: Boost, Factor: 0.1}}, map[string][]uint32{"b": {0}}, []uint32{1, 2, 3, 4, 0}},
		{"bury", []*Rule{{Name: "u", Action: Bury}}, map[string][]uint32{"u": {0, 2}}, []uint32{1, 3, 4, 0, 2}},
		{"pin", []*Rule{{Name: "p", Action: Pin, Position: 2}}, map[string][]uint32{"p": {4, 3}}, []uint32{0, 3, 1, 2, 4}},
		{"pin past the end", []*Rule{{Name: "p", Action: Pin, Position: 9}}, map[string][]uint32{"p": {0}}, []uint32{1, 2, 3, 4, 0}},
		// Pin at 3 takes item 0 (first match); pin at 2 takes item 4.
		{"two pins", []*Rule{{Name: "p3", Action: Pin, Position: 3}, {Name: "p2", Action: Pin, Position: 2}}, map[string][]uint32{"p3": {0, 4}, "p2": {4}}, []uint32{1, 4, 0, 2, 3}},
		{"pins at one position", []*Rule{{Name: "p", Action: Pin, Position: 1}, {Name: "q", Action: Pin, Position: 1}}, map[string][]uint32{"p": {3}, "q": {4}}, []uint32{3, 4, 0, 1, 2}},
		{"pin beats bury", []*Rule{{Name: "u", Action: Bury}, {Name: "p", Action: Pin, Position: 1}}, map[string][]uint32{"u": {4}, "p": {4}}, []uint32{4, 0, 1, 2, 3}},
		{"bury after boost", []*Rule{{Name: "u", Action: Bury}, {Name: "b", Action: Boost, Factor: 10}}, map[string][]uint32{"u": {4}, "b": {4, 3}}, []uint32{3, 0, 1, 2, 4}},
		{"no match", []*Rule{{Name: "p", Action: Pin, Position: 1}}, nil, []uint32{0, 1, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Apply(pool(5), tt.rules, matchSets(tt.sets))
			if !slices.Equal(items(got), tt.want) {
				t.Errorf("got %v, want %v", items(got), tt.want)
			}
		})
	}
}

func TestApply_scoresAndNames(t *testing.T) {
	rs := []*Rule{{Name: "b", Action: Boost, Factor: 2}, {Name: "p", Action: Pin, Position: 1}}
	got := Apply([]Entry{{Item: 7, Score: 1}, {Item: 8, Score: -4}, {Item: 9, Score: 0.5}}, rs,
		matchSets(map[string][]uint32{"b": {8, 9}, "p": {8}}))
	want := []Entry{{Item: 8, Score: -2, Rules: []string{"b", "p"}}, {Item: 7, Score: 1}, {Item: 9, Score: 1, Rules: []string{"b"}}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k := range want {
		if got[k].Item != want[k].Item || got[k].Score != want[k].Score || !slices.Equal(got[k].Rules, want[k].Rules) {
			t.Errorf("entry %d = %+v, want %+v", k, got[k], want[k])
		}
	}
}

func TestBoosted(t *testing.T) {
	for _, tt := range []struct{ s, f, want float64 }{{2, 1.5, 3}, {-2, 2, -1}, {0, 3, 0}, {4, 0.5, 2}, {-1, 0.5, -2}} {
		if got := Boosted(tt.s, tt.f); got != tt.want {
			t.Errorf("Boosted(%v, %v) = %v, want %v", tt.s, tt.f, got, tt.want)
		}
	}
}
