package api

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestValidateID(t *testing.T) {
	cases := []struct {
		id string
		ok bool
	}{
		{"u1", true}, {"é-ü", true}, {strings.Repeat("a", 256), true}, {"a/b c", true},
		{"", false}, {strings.Repeat("a", 257), false}, {"a\x00b", false}, {"a\nb", false},
		{"\xff", false}, {"a\u0085b", false},
	}
	for _, c := range cases {
		if got := ValidateID(c.id) == ""; got != c.ok {
			t.Errorf("ValidateID(%q) ok = %v, want %v (%s)", c.id, got, c.ok, ValidateID(c.id))
		}
	}
}

// FuzzValidateID cross-checks ValidateID against the rule of docs/design.md#data
// written out a second way.
func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"", "a", "a\tb", "\xc3", strings.Repeat("é", 128), strings.Repeat("é", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s) >= 1 && len(s) <= 256 && utf8.ValidString(s) &&
			strings.IndexFunc(s, unicode.IsControl) < 0
		if got := ValidateID(s) == ""; got != want {
			t.Fatalf("ValidateID(%q) accepts = %v, want %v", s, got, want)
		}
	})
}

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy("view, play>=3, !dislike")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ev            Interaction
		pos, neg, bad bool
	}{
		{Interaction{Type: "view"}, true, false, false},
		{Interaction{Type: "play", Value: 2, HasValue: true}, false, false, false},
		{Interaction{Type: "play", Value: 3, HasValue: true}, true, false, false},
		{Interaction{Type: "play"}, false, false, true}, // a thresholded type needs a value
		{Interaction{Type: "dislike"}, false, true, false},
		{Interaction{Type: "teleport"}, false, false, true},
	}
	for _, c := range cases {
		pos, neg, err := p.Judge(c.ev)
		if pos != c.pos || neg != c.neg || (err != nil) != c.bad {
			t.Errorf("Judge(%+v) = %v, %v, %v; want %v, %v, error %v", c.ev, pos, neg, err, c.pos, c.neg, c.bad)
		}
	}
	for _, bad := range []string{"", "play>=x", ",,"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) accepted", bad)
		}
	}
	if got := p.String(); got != "!dislike,play>=3,view" {
		t.Errorf("String() = %q", got)
	}
}

func TestFeatures_UnmarshalJSON(t *testing.T) {
	var f Features
	if err := json.Unmarshal([]byte(`[1, 2.5, 0]`), &f); err != nil {
		t.Fatal(err)
	}
	if len(f) != 3 || f["0"] != 1 || f["1"] != 2.5 || f["2"] != 0 {
		t.Fatalf("array features = %v", f)
	}
	if err := json.Unmarshal([]byte(`{"action": 1}`), &f); err != nil || f["action"] != 1 {
		t.Fatalf("object features = %v, %v", f, err)
	}
	for _, bad := range []string{`"x"`, `[true]`, `{"a":"b"}`} {
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("features %s accepted", bad)
		}
	}
}

// TestMergePatch_rfc7396 runs the examples of RFC 7396 Appendix A.
func TestMergePatch_rfc7396(t *testing.T) {
	cases := []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, c := range cases {
		var target, patch, want any
		for k, s := range []string{c.target, c.patch, c.want} {
			if err := json.Unmarshal([]byte(s), []*any{&target, &patch, &want}[k]); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := json.Marshal(MergePatch(target, patch))
		wantJSON, _ := json.Marshal(want)
		if string(got) != string(wantJSON) {
			t.Errorf("MergePatch(%s, %s) = %s, want %s", c.target, c.patch, got, wantJSON)
		}
	}
}
