package recsys

import (
	"math"
	"testing"
)

// near reports whether got is want within a relative 1e-12.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Abs(want) }

// The point costs by hand on 1,000 users × 2,000 items, 50,000 positives
// (r = 50 a user), 100 validation users, lists cached up to k = 100.
func TestPointCost_byHand(t *testing.T) {
	s := Shape{Users: 1000, Items: 2000, Positives: 50_000, ValidationUsers: 100, KMax: 100}
	for _, c := range []struct {
		name string
		got  float64
		ops  float64
	}{
		// itemknn at k = 50 from the cache: 4·2,000·50 = 400,000 to cut the
		// lists; validation 100 × (6·2,000 + 2·50·50) = 1,700,000.
		{"itemknn k=50", itemListPoint(s, Params{K: 50}), 400_000 + 1_700_000},
		// Doubling k doubles the lists' part and the scoring's: 800,000 +
		// 100 × (12,000 + 10,000) = 3,000,000.
		{"itemknn k=100", itemListPoint(s, Params{K: 100}), 800_000 + 2_200_000},
		// Past the cache's 100 the lists are built: 50,000·50·3 co-counts
		// × (1 + log₂ 200); 1,600,000 to cut, 100 × (12,000 + 20,000).
		{"itemknn k=200", itemListPoint(s, Params{K: 200}), 1_600_000 + 7_500_000*(1+math.Log2(200)) + 3_200_000},
		// userknn at k = 50: 100 × (12,000 + 6·50·25 + 50·50) = 100 × 22,000.
		{"userknn k=50", userListPoint(s, Params{K: 50}), 2_200_000},
		// ease, dense (2,000 items ≤ 8,000): 50,000·50/2 + 0.13·2,000³ +
		// 2,000² + 100 × (12,000 + 50·2,000).
		{"ease dense", easePoint(s, Params{Extra: map[string]float64{"lambda": 100}}), 1_250_000 + 0.13*8e9 + 4_000_000 + 100*112_000},
		// ease, sparse (dense limit 1,000): 0.1·2,000·200³/3 + 100 × (12,000
		// + 2·50·200).
		{"ease sparse", easePoint(s, Params{Extra: map[string]float64{"lambda": 100, "max_dense": 1000}}), 0.1*2000*8e6/3 + 100*32_000},
		// slim at k = 50: 2,000·50²·16/8 + 100 × (12,000 + 2·50·50).
		{"slim k=50", slimPoint(s, Params{K: 50, L1: 1, L2: 1}), 2000*2500*2 + 100*17_000},
	} {
		if want := OpSeconds * c.ops; !near(c.got, want) {
			t.Errorf("%s: %.9g s, want %.9g", c.name, c.got, want)
		}
	}
	// 10,000 items of which 2,000 have a positive: EASE is dense on those
	// 2,000 (the fit's choice), ranking all 10,000 in validation.
	wide := s
	wide.Items, wide.ActiveItems = 10_000, 2000
	if got, want := easePoint(wide, Params{Extra: map[string]float64{"lambda": 100}}), OpSeconds*(1_250_000+0.13*8e9+4_000_000+100*(60_000+100_000)); !near(got, want) {
		t.Errorf("ease on 2,000 active items of 10,000: %.9g s, want %.9g", got, want)
	}
	// What a batch shares: slim's Gram matrices at the largest k, 1.5·I·k²
	// (50 and 100: 1.5·2,000·100²), EASE's sparse counts at k = 200 past
	// the cache (1.5·2,000·200² and the lists), none for the dense EASE.
	if got, want := slimGrid(s, []Params{{K: 50}, {K: 100}}), OpSeconds*1.5*2000*1e4; !near(got, want) {
		t.Errorf("slim grid %.9g s, want %.9g", got, want)
	}
	sparse := Params{Extra: map[string]float64{"lambda": 10, "max_dense": 1000}}
	if got, want := easeGrid(s, []Params{sparse}), OpSeconds*(1.5*2000*4e4+7_500_000*(1+math.Log2(200))); !near(got, want) {
		t.Errorf("ease sparse grid %.9g s, want %.9g", got, want)
	}
	if got := easeGrid(s, []Params{{Extra: map[string]float64{"lambda": 10}}}); got != 0 {
		t.Errorf("ease dense grid %g s, want 0: each λ is its own fit", got)
	}
	// RP³β: one walk (50,000·50·3 = 7,500,000) and, for each of the 2 β,
	// the k_max = 100 best pushed through a heap (×log₂ 100).
	if got, want := rp3Grid(s, []Params{{K: 50, Extra: map[string]float64{"beta": 0}}, {K: 100, Extra: map[string]float64{"beta": 0.5}}, {K: 100, Extra: map[string]float64{"beta": 0}}}),
		OpSeconds*7_500_000*(1+2*math.Log2(100)); !near(got, want) {
		t.Errorf("rp3beta grid %.9g s, want %.9g", got, want)
	}
}

// Every kind with a grid and no search of its own predicts its points,
// and a larger main parameter costs more.
func TestPointCost_everyGrid(t *testing.T) {
	s := Shape{Users: 1000, Items: 2000, Positives: 50_000, ValidationUsers: 100, KMax: 200}
	for _, name := range Names() {
		k, _ := KindOf(name)
		if k.Candidates == nil || k.Search != nil {
			continue
		}
		if k.PointCost == nil {
			t.Errorf("%s has a grid and no PointCost", name)
			continue
		}
		small, large := k.PointCost(s, Params{K: 10}), k.PointCost(s, Params{K: 100})
		if small <= 0 || large < small {
			t.Errorf("%s: %g s at 10, %g s at 100", name, small, large)
		}
	}
}
