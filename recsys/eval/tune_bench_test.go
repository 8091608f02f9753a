package eval

import (
	"context"
	"fmt"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// BenchmarkTune_validationUsers tunes item KNN (k ∈ {10, 20, 50, 100})
// on 20,000 users × 2,000 items, validating every grid point on all the
// validation users or on a fixed-seed sample (Tuning.ValidationUsers).
// The neighbour lists are computed before the timer starts, so the
// difference is the validation itself.
//
//	go test -run '^$' -bench Tune_validationUsers -benchtime 3x ./recsys/eval
func BenchmarkTune_validationUsers(b *testing.B) {
	split, err := NewSplit(clustered(3, 20_000, 2_000, 20, 40), Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cache := recsys.NewNeighbourCache(split.Train, 100)
	if _, err := cache.MaxRow(ctx, nil); err != nil {
		b.Fatal(err)
	}
	grid := recsys.Grid{K: []int{10, 20, 50, 100}}
	for _, n := range []int{-1, 5000, 1000} {
		name := fmt.Sprintf("users=%d", n)
		if n < 0 {
			name = "users=all"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Tune(ctx, "itemknn", split, cache, Tuning{Grid: grid, ValidationUsers: n}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
