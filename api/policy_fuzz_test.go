package api

import (
	"math"
	"strings"
	"testing"
)

// FuzzParsePolicy feeds arbitrary --event-types specs to the parser: it
// returns an error or a policy that has the default type, names of 1–64
// bytes, and survives a round trip through String.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{DefaultPolicySpec, "", ",", "!", ">=", "a>=", "a>=x", "a>=1e400", "a>=NaN",
		"!a>=3", " view , click ", strings.Repeat("x", 65), "a,a,!a", "rating>=-Inf", "a>=0x10", "é>=1.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := ParsePolicy(spec)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if _, ok := p.Types[DefaultType]; !ok {
			t.Fatalf("policy from %q lacks the default type", spec)
		}
		for name, typ := range p.Types {
			if name == "" || len(name) > 64 {
				t.Fatalf("type name %q accepted from %q", name, spec)
			}
			if typ.HasMin && math.IsNaN(typ.MinValue) {
				t.Fatalf("NaN threshold accepted from %q", spec)
			}
		}
		q, err := ParsePolicy(p.String())
		if err != nil {
			t.Fatalf("String() of %q does not parse: %v", spec, err)
		}
		if q.String() != p.String() {
			t.Fatalf("round trip of %q: %q then %q", spec, p.String(), q.String())
		}
	})
}
