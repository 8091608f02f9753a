package recsys

import (
	"context"
	"reflect"
	"slices"
	"testing"
)

// dense hides a model's SparseScorer.
type dense struct{ Model }

// Validation ranks the same with the sparse scorer as scoring every
// item, on a wide catalogue where most users' rows reach few items (and
// the rest take the full pass).
func TestRankHeldOutLive_sparseSameAsFull(t *testing.T) {
	x := generated(t, 8, 400, 20000, 30)
	for _, name := range []string{"itemknn", "slim"} {
		m, _ := New(name)
		if err := m.Fit(context.Background(), x, Params{K: 10}); err != nil {
			t.Fatal(err)
		}
		// Every fourth item of a user's row is held out; the rest is the
		// live history, and every tenth user's also holds the first
		// whole catalogue, which reach too many items for
		// the sparse scorer.
		sets := [][][]uint32{make([][]uint32, x.Users())}
		live := make([][]uint32, x.Users())
		sparse := 0
		var touched []uint32
		scores := make([]float64, x.Items())
		for u := range x.Users() {
			row := x.Row(u)
			for k, i := range row {
				if k%4 == 0 {
					sets[0][u] = append(sets[0][u], i)
				}
			}
			for i := range uint32(x.Items()) {
				held := containsSorted(sets[0][u], i)
				if !held && (u%10 == 0 && i < 20000 || containsSorted(row, i)) {
					live[u] = append(live[u], i)
				}
			}
			var ok bool
			if touched, ok = m.(SparseScorer).ScoreSparse(live[u], scores, touched); ok {
				sparse++
			}
		}
		// slim's weights are too few for any user to reach many items.
		if sparse == 0 || name == "itemknn" && sparse == x.Users() {
			t.Fatalf("%s: %d of %d users scored sparsely; the test needs both kinds", name, sparse, x.Users())
		}
		pop := x.Popularity()
		got, _, err := RankHeldOutLive(context.Background(), m, x, live, pop, sets, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := RankHeldOutLive(context.Background(), dense{m}, x, live, pop, sets, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: sparse ranks differ from full scoring", name)
		}
	}
}

func containsSorted(s []uint32, v uint32) bool { _, ok := slices.BinarySearch(s, v); return ok }
