package recsys

import (
	"math"
	"testing"
)

func TestTimeLaw_seconds(t *testing.T) {
	l := TimeLaw{At1M: 10, Exponent: 0.5}
	for _, c := range []struct {
		positives int
		want      float64
	}{{1_000_000, 10}, {4_000_000, 20}, {250_000, 5}, {0, 0}} {
		if got := l.Seconds(c.positives); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Seconds(%d) = %v, want %v", c.positives, got, c.want)
		}
	}
}

func TestShape_K(t *testing.T) {
	for _, c := range []struct {
		s        Shape
		k, userK int
	}{{Shape{Users: 1000, Items: 5000}, 200, 200}, {Shape{Users: 30, Items: 50, KMax: 100}, 49, 29}, {Shape{Items: 1}, 0, 0}} {
		if got, gotU := c.s.K(), c.s.UserK(); got != c.k || gotU != c.userK {
			t.Errorf("%+v: K %d, UserK %d; want %d, %d", c.s, got, gotU, c.k, c.userK)
		}
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 141772: "141,772", 1_000_000: "1,000,000", -1234567: "-1,234,567"} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// EASE's memory: dense up to the dense limit, 16·m² bytes (the m×m float64
// Gram matrix inverted in place, 8·m², and two m×m float32 weight
// matrices, the search's best and the one fitted); the limit is read as
// the fit reads it.
func TestEASEMemory(t *testing.T) {
	b, what := easeMemory(Shape{Users: 1000, Items: 5000})
	if b != 400_000_000 || what != "a dense 5,000² Gram matrix, its inverse and the weights" {
		t.Errorf("5,000 items: %d bytes, %q; want 400,000,000 (16 × 5,000²), dense", b, what)
	}
	// Above the default limit of 8,000 items: sparse, k_max 200, 4 λ:
	// 14 lists × 10,000 × 200 × 16 bytes = 448,000,000, and the pair
	// counter of the 2,048 most popular items, 2048²·4 = 16,777,216 and
	// 2048 × ⌈1,000/64⌉ = 16 words × 8 = 262,144: 465,039,360 bytes.
	if b, what = easeMemory(Shape{Users: 1000, Items: 10_000}); b != 465_039_360 || what != "sparse weights of 10,000 items × 200 neighbours for each of 4 λ" {
		t.Errorf("10,000 items: %d bytes, %q; want 465,039,360, sparse", b, what)
	}
	t.Setenv(EnvEASEMaxDense, "20000")
	if b, _ = easeMemory(Shape{Users: 1000, Items: 10_000}); b != 1_600_000_000 {
		t.Errorf("10,000 items under a dense limit of 20,000: %d bytes, want 1,600,000,000 (16 × 10,000²)", b)
	}
	// The time scales by the items: 71.7 s at 1M positives on 27,000 items.
	if c := easeCost(Shape{Users: 1000, Items: 54_000, Positives: 1_000_000}); math.Abs(c.Seconds-143.4) > 1e-9 {
		t.Errorf("ease on 54,000 items at 1M positives: %.2f s, want 2 × 71.7", c.Seconds)
	}
}
