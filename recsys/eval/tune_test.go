package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// TestSampleUsers: a sample at least as large as the validation users
// changes nothing; a smaller one keeps exactly n of the users with
// held-out items, with their items untouched, the same for the same seed
// and another for another seed; Tune validates every candidate on that
// sample, which a direct computation over the same users confirms.
func TestSampleUsers(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	d := &Dataset{}
	for u := 0; u < 200; u++ {
		d.UserIDs = append(d.UserIDs, fmt.Sprintf("u%d", u))
	}
	for i := 0; i < 100; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprintf("i%d", i))
	}
	for u := 0; u < 200; u++ {
		seen := map[uint32]bool{}
		for len(seen) < 20 {
			seen[uint32(int(100*rng.Float64()*rng.Float64()))] = true
		}
		for i := range seen {
			d.Users, d.Items = append(d.Users, uint32(u)), append(d.Items, i)
		}
	}
	split, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, v := range split.Validation {
		if len(v) > 0 {
			users++
		}
	}
	if users < 100 {
		t.Fatalf("%d validation users, want ≥ 100 for this test", users)
	}
	for _, n := range []int{0, -1, users, users + 1} {
		if got := SampleUsers(split.Validation, n, 7); !slices.EqualFunc(got, split.Validation, slices.Equal) {
			t.Errorf("n = %d: the sample differs from the whole", n)
		}
	}
	sample := SampleUsers(split.Validation, 10, 7)
	kept := 0
	for u, v := range sample {
		if len(v) == 0 {
			continue
		}
		kept++
		if !slices.Equal(v, split.Validation[u]) {
			t.Errorf("user %d: sampled items %v, want %v", u, v, split.Validation[u])
		}
	}
	if kept != 10 {
		t.Errorf("a sample of 10 kept %d users", kept)
	}
	if again := SampleUsers(split.Validation, 10, 7); !slices.EqualFunc(again, sample, slices.Equal) {
		t.Error("the same seed drew another sample")
	}
	if other := SampleUsers(split.Validation, 10, 8); slices.EqualFunc(other, sample, slices.Equal) {
		t.Error("seeds 7 and 8 drew the same sample of 10 among many users")
	}

	ctx := context.Background()
	cache := recsys.NewNeighbourCache(split.Train, 20)
	tuned, err := Tune(ctx, "itemknn", split, cache, Tuning{Grid: recsys.Grid{K: []int{20}}, ValidationUsers: 10, SampleSeed: 7})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := recsys.New("itemknn")
	if err := m.Fit(ctx, split.Train, recsys.Params{K: 20}); err != nil {
		t.Fatal(err)
	}
	want, err := Evaluate(ctx, m, split.Train, sample)
	if err != nil {
		t.Fatal(err)
	}
	all, err := Evaluate(ctx, m, split.Train, split.Validation)
	if err != nil {
		t.Fatal(err)
	}
	// Goroutines add their partial sums in any order: compare to rounding.
	near := func(a, b metrics.Values) bool {
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-12 {
				return false
			}
		}
		return true
	}
	if !near(tuned.Validation, want) {
		t.Errorf("Tune with 10 validation users: %v, want the mean over the sample %v", tuned.Validation, want)
	}
	if near(want, all) {
		t.Error("a sample of 10 of many users gave the mean over all of them")
	}
	full, err := Tune(ctx, "itemknn", split, cache, Tuning{Grid: recsys.Grid{K: []int{20}}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(full.Validation, all) {
		t.Errorf("Tune with the default sample above the %d users: %v, want the mean over all %v", users, full.Validation, all)
	}
}
