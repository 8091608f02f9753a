package content

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// TestLearnContent_coldRule_grouped: 480 items in 4 groups of 120, each
// group one feature (g0..g3 = 1), and 25 users per group who each
// consumed 40 items of their own group only; item 0 also has a feature
// "rare" that no other item has. Support is each feature's count among
// the items learned on (every item here has positives and neighbours):
// 120 per group feature, 1 for rare. The validation holds out 10% of the
// 480 items, 48, and pairs each of the 100 users (all have history) with
// each: 4,800 pairs. Every held-out consumption lies at distance 0 (the
// user's own group, the same feature vector) and every other pair
// farther, so the threshold is 0: a cold item reaches only the users of
// its own group.
func TestLearnContent_coldRule_grouped(t *testing.T) {
	const groups, perGroup, usersPer, consumed = 4, 120, 25, 40
	snap := &api.Snapshot{FeatureNames: []string{"g0", "g1", "g2", "g3", "rare"}}
	for i := range groups * perGroup {
		f := make([]float64, 5)
		f[i/perGroup] = 1
		if i == 0 {
			f[4] = 1
		}
		snap.ItemIDs = append(snap.ItemIDs, fmt.Sprintf("i%d", i))
		snap.Features = append(snap.Features, f)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for u := range groups * usersPer {
		snap.UserIDs = append(snap.UserIDs, fmt.Sprintf("u%d", u))
		g := u / usersPer
		for _, k := range rng.Perm(perGroup)[:consumed] {
			snap.Users = append(snap.Users, uint32(u))
			snap.Items = append(snap.Items, uint32(g*perGroup+k))
		}
	}
	c, val, n, err := learnContent(context.Background(), trainData(t, snap))
	if err != nil || c == nil {
		t.Fatalf("learnContent = %v, %d, %v", c, n, err)
	}
	if n != groups*perGroup {
		t.Fatalf("learned on %d items, want all %d", n, groups*perGroup)
	}
	rule := c.Cold()
	if want := []uint32{120, 120, 120, 120, 1}; fmt.Sprint(rule.Support) != fmt.Sprint(want) {
		t.Errorf("support %v, want %v", rule.Support, want)
	}
	if val.heldOut != 48 || val.pairs != 48*groups*usersPer {
		t.Errorf("validation held out %d items in %d pairs, want 48 and %d", val.heldOut, val.pairs, 48*groups*usersPer)
	}
	if val.consumed < coldMinConsumed || val.excess <= 0 {
		t.Errorf("validation: %d consumed pairs, excess %v; want ≥ %d and > 0", val.consumed, val.excess, coldMinConsumed)
	}
	if rule.MaxDistance != 0 {
		t.Errorf("threshold %v, want 0 (every consumption at distance 0)", rule.MaxDistance)
	}
	// A group's items are at distance 0 of each other and farther from the
	// other groups: the threshold separates them.
	d01, err := c.Metric().Distance(snap.Features[1], snap.Features[perGroup])
	if err != nil || !(d01 > rule.MaxDistance) {
		t.Errorf("distance between groups 0 and 1: %v, %v; want > the threshold %v", d01, err, rule.MaxDistance)
	}

	t.Run("too few consumptions to choose on", func(t *testing.T) {
		// User u of group g consumed items u%25 and (u+1)%25 of g: 25 items
		// per group have positives, 2 each, so the support is 25 per group
		// and 1 for rare (item 0), and the 10 held-out items have 20
		// consumed pairs, fewer than coldMinConsumed: no threshold.
		small := *snap
		small.Users, small.Items = nil, nil
		for u := range groups * usersPer {
			small.Users = append(small.Users, uint32(u), uint32(u))
			small.Items = append(small.Items, uint32(u/usersPer*perGroup+u%usersPer), uint32(u/usersPer*perGroup+(u+1)%usersPer))
		}
		c, val, _, err := learnContent(context.Background(), trainData(t, &small))
		if err != nil || c == nil {
			t.Fatalf("learnContent = %v, %v", c, err)
		}
		if val.consumed >= coldMinConsumed || !math.IsInf(c.Cold().MaxDistance, 1) {
			t.Errorf("%d consumed held-out pairs, threshold %v: want fewer than %d and +Inf", val.consumed, c.Cold().MaxDistance, coldMinConsumed)
		}
		if want := []uint32{25, 25, 25, 25, 1}; fmt.Sprint(c.Cold().Support) != fmt.Sprint(want) {
			t.Errorf("support %v, want %v", c.Cold().Support, want)
		}
		if val.heldOut != 10 || val.consumed != 20 {
			t.Errorf("held out %d items with %d consumed pairs, want 10 and 20", val.heldOut, val.consumed)
		}
	})
}

// trainData is what a training job gives the content metric of snap, with
// seed 1.
func trainData(t *testing.T, snap *api.Snapshot) recsys.TrainData {
	t.Helper()
	pairs := make([]recsys.Pair, len(snap.Users))
	for k := range snap.Users {
		pairs[k] = recsys.Pair{User: snap.Users[k], Item: snap.Items[k]}
	}
	x, err := recsys.NewMatrix(len(snap.UserIDs), len(snap.ItemIDs), pairs)
	if err != nil {
		t.Fatal(err)
	}
	return recsys.TrainData{X: x, FeatureNames: snap.FeatureNames, Features: snap.Features, Seed: 1}
}
