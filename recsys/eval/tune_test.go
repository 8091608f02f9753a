package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"recsys/recsys/metrics"
)

// TestValidate_users: a cap at or above the number of validation users
// changes nothing; a smaller cap averages over that many evenly spaced
// users, which a direct computation over the same users confirms.
func TestValidate_users(t *testing.T) {
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
	split, m := itemKNNOnSplit(t, d, 20)
	ctx := context.Background()
	all, err := validate(ctx, m, split, 0)
	if err != nil {
		t.Fatal(err)
	}
	var users []int
	for u, v := range split.Validation {
		if len(v) > 0 {
			users = append(users, u)
		}
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
	if same, _ := validate(ctx, m, split, len(users)); !near(same, all) {
		t.Errorf("cap = number of users: %v, want %v", same, all)
	}
	capped, _ := validate(ctx, m, split, 10)
	sub := &Split{Train: split.Train, Validation: make([][]uint32, len(split.Validation))}
	for k := 0; k < 10; k++ {
		u := users[k*len(users)/10]
		sub.Validation[u] = split.Validation[u]
	}
	if want, _ := validate(ctx, m, sub, 0); !near(capped, want) {
		t.Errorf("cap 10: %v, want the mean over 10 evenly spaced users %v", capped, want)
	}
	if near(capped, all) {
		t.Error("a cap of 10 of many users gave the mean over all of them")
	}
}
