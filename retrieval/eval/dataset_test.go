package eval

import (
	"slices"
	"strings"
	"testing"
)

func TestParseCSV(t *testing.T) {
	in := "a,label,b\n1,x,2\n3.5,y,-4\n0,x,1e3\n"
	d, err := ParseCSV(strings.NewReader(in), "label")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Features, []string{"a", "b"}) || !slices.Equal(d.Classes, []string{"x", "y"}) || !slices.Equal(d.Labels, []int{0, 1, 0}) {
		t.Fatalf("got %+v", d)
	}
	if !slices.Equal(d.X[1], []float64{3.5, -4}) || d.X[2][1] != 1000 {
		t.Fatalf("rows %v", d.X)
	}
	for _, bad := range []string{"", "a,b\n1,2\n", "a,label\n", "a,label\nfoo,x\n", "a,label\n1,x,3\n", "label\nx\n"} {
		if _, err := ParseCSV(strings.NewReader(bad), "label"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseCSV(f *testing.F) {
	f.Add("a,label\n1,x\n2,y\n")
	f.Add("label,a,b\nq,1,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseCSV(strings.NewReader(in), "label")
		if err != nil {
			return
		}
		if len(d.X) != len(d.Labels) || len(d.X) == 0 {
			t.Fatalf("%d rows, %d labels", len(d.X), len(d.Labels))
		}
		for _, x := range d.X {
			if len(x) != len(d.Features) {
				t.Fatalf("row of %d values for %d features", len(x), len(d.Features))
			}
		}
	})
}
