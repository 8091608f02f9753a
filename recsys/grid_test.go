package recsys

import (
	"slices"
	"testing"
)

func TestCapK(t *testing.T) {
	ks := []int{10, 20, 50, 100, 200, 500, 1000}
	for _, tc := range []struct {
		limit int
		want  []int
	}{
		{5000, ks}, {1000, ks}, {120, []int{10, 20, 50, 100, 200}}, {50, []int{10, 20, 50}}, {0, []int{10}},
	} {
		if got := CapK(ks, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("CapK(%d) = %v, want %v", tc.limit, got, tc.want)
		}
	}
}
