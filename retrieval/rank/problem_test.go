package rank

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestProblem_Check: missing data, a supervision over another number of
// items and a supervision without a usable query are refused; otherwise
// the default queries are the supervision's.
func TestProblem_Check(t *testing.T) {
	two, err := FromLabels([]int{0, 0, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	one, err := FromLabels([]int{0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(4, 2, nil)
	for _, p := range []Problem{
		{Sup: two},
		{X: x},
		{X: mat.NewDense(3, 2, nil), Sup: two},
		{X: x, Sup: one}, // every item relevant to every query: no irrelevant one
	} {
		if err := p.Check(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	p := Problem{X: x, Sup: two}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3}; !slices.Equal(p.Queries, want) {
		t.Fatalf("queries %v, want %v", p.Queries, want)
	}
}
