package record

import (
	"bytes"
	"cmp"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

func TestNaturalKey(t *testing.T) {
	cases := []struct {
		id   string
		want []byte
	}{
		{"a", []byte("a")},
		{"7", []byte("0\x00\x017")},
		{"007", []byte("0\x00\x017")},
		{"0", []byte("0\x00\x00")},
		{"a10b", []byte("a0\x00\x0210b")},
		{"x1y22", []byte("x0\x00\x011y0\x00\x0222")},
		{"é9", []byte("\xc3\xa90\x00\x019")},
	}
	for _, c := range cases {
		if got := NaturalKey(c.id); !bytes.Equal(got, c.want) {
			t.Errorf("NaturalKey(%q) = %q, want %q", c.id, got, c.want)
		}
		if got := OrderKeyID(OrderKey(c.id)); got != c.id {
			t.Errorf("OrderKeyID(OrderKey(%q)) = %q", c.id, got)
		}
	}
	// A run of 256 digits (the longest id) has a length of two bytes.
	long := string(bytes.Repeat([]byte("9"), api.MaxIDBytes))
	if k := NaturalKey(long); len(k) != 3+api.MaxIDBytes || k[1] != 1 || k[2] != 0 || OrderKeyID(OrderKey(long)) != long {
		t.Fatalf("NaturalKey of 256 nines: % x…", k[:4])
	}
}

func TestCompareNatural(t *testing.T) {
	want := []string{"-5", "0", "00", "01", "1", "2", "007", "7", "9", "10", "100", "1000", "1001",
		"18446744073709551616", "99999999999999999999", "100000000000000000000",
		"A", "a", "a b", "a-1", "a02", "a2", "a2b", "a10", "ab", "b", "x1y9", "x1y10", "x2", "é", "é2", "é10"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, CompareNatural)
	if !slices.Equal(got, want) {
		t.Fatalf("sorted %q, want %q", got, want)
	}
}

// naturalToken is a run of digits (num, the number without its leading
// zeros) or one other byte.
type naturalToken struct {
	num bool
	s   string
}

// naturalTokens splits an id as the natural order reads it.
func naturalTokens(id string) []naturalToken {
	var out []naturalToken
	for k := 0; k < len(id); {
		if !isDigit(id[k]) {
			out = append(out, naturalToken{s: id[k : k+1]})
			k++
			continue
		}
		end := k
		for end < len(id) && isDigit(id[end]) {
			end++
		}
		n := id[k:end]
		for len(n) > 0 && n[0] == '0' {
			n = n[1:]
		}
		out = append(out, naturalToken{num: true, s: n})
		k = end
	}
	return out
}

// referenceNatural is the natural order written directly: token by token,
// numbers by their length and then their digits, a number against a byte
// as the digit 0 would compare, then the ids' bytes.
func referenceNatural(a, b string) int {
	ta, tb := naturalTokens(a), naturalTokens(b)
	for k := 0; k < len(ta) && k < len(tb); k++ {
		x, y := ta[k], tb[k]
		var c int
		switch {
		case x.num && y.num:
			c = cmp.Or(cmp.Compare(len(x.s), len(y.s)), cmp.Compare(x.s, y.s))
		case x.num:
			c = cmp.Compare(byte('0'), y.s[0])
		case y.num:
			c = cmp.Compare(x.s[0], byte('0'))
		default:
			c = cmp.Compare(x.s, y.s)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(len(ta), len(tb)), cmp.Compare(a, b))
}

// FuzzOrderKey: OrderKey orders ids as the natural order written directly
// does, and gives its id back.
func FuzzOrderKey(f *testing.F) {
	for _, s := range [][2]string{{"a2", "a10"}, {"007", "7"}, {"-1", "0"}, {"a", "a0"}, {"x00", "x0"}, {"1a", "1"}, {"é", "9"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, id := range []string{a, b} {
			if api.ValidateID(id) != "" {
				return
			}
		}
		for _, id := range []string{a, b} {
			if got := OrderKeyID(OrderKey(id)); got != id {
				t.Fatalf("OrderKeyID(OrderKey(%q)) = %q", id, got)
			}
		}
		got, want := bytes.Compare(OrderKey(a), OrderKey(b)), referenceNatural(a, b)
		if got != want || CompareNatural(a, b) != want {
			t.Fatalf("%q against %q: OrderKey %d, CompareNatural %d, want %d", a, b, got, CompareNatural(a, b), want)
		}
	})
}
