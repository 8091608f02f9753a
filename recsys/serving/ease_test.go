package serving

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// TestEngine_easeRP3Beta_liveHistory: ease and rp3beta answer from the
// history at request time, so a user's new events change the list at
// once, with the consumed items as reasons. The two tastes of twoTastes,
// {a, b, c} (3 users) and {x, y, z} (4 users), share no user, so XᵀX is block
// diagonal. EASE, λ = 1: column b is the ridge regression
// [[4,3],[3,4]] w = [3,3], w = 3/7 on a and c; column z is [[5,4],[4,5]]
// w = [4,4], w = 4/9 on x and y. RP3β, β = 0: W(a, b) = 3·(1/3)(1/3) = 1/3
// and W(x, z) = 4·(1/4)(1/3) = 1/3. After a, the list is b and c; after
// a, x and y, z (8/9 or 2/3) comes before b and c (3/7 or 1/3).
func TestEngine_easeRP3Beta_liveHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    recsys.Params
		w    float64 // the weight of x (and y) in z's score
	}{
		{"ease", recsys.Params{Extra: map[string]float64{"lambda": 1}}, 4.0 / 9},
		{"ease", recsys.Params{K: 5, Extra: map[string]float64{"lambda": 1, "max_dense": 0}}, 4.0 / 9},
		{"rp3beta", recsys.Params{K: 5, Extra: map[string]float64{"beta": 0}}, 1.0 / 3},
	} {
		st := twoTastes(t)
		ctx := context.Background()
		m := fitModel(t, st, tc.name, tc.p)
		eng := NewEngine(st, EngineOptions{PopularityTTL: time.Nanosecond})
		eng.Install(&Served{Info: api.ModelInfo{Name: tc.name, Version: "v1"}, Model: m}, true)

		add(t, st, "fresh", "view", "a")
		rec, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "fresh", N: 2, ExcludeConsumed: true, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(rec.Items); !slices.Equal(got, []string{"b", "c"}) || rec.Fallback != "" {
			t.Fatalf("%s %v: after a %v %+v, want [b c]", tc.name, tc.p.Extra, got, rec)
		}
		if r := rec.Items[0].Reasons; len(r) != 1 || r[0].Kind != "item" || r[0].ID != "a" {
			t.Fatalf("%s %v: reasons for b = %+v, want the consumed item a", tc.name, tc.p.Extra, r)
		}
		add(t, st, "fresh", "view", "x", "y")
		rec, _ = eng.Recommend(ctx, api.RecommendRequest{UserID: "fresh", N: 3, ExcludeConsumed: true, Explain: true})
		if got := ids(rec.Items); !slices.Equal(got, []string{"z", "b", "c"}) || math.Abs(rec.Items[0].Score-2*tc.w) > 1e-7 {
			t.Fatalf("%s %v: after a, x, y %+v, want [z b c] with z at %g", tc.name, tc.p.Extra, rec.Items, 2*tc.w)
		}
		r := rec.Items[0].Reasons
		if len(r) != 2 || r[0].ID == r[1].ID || !slices.Contains([]string{"x", "y"}, r[0].ID) || !slices.Contains([]string{"x", "y"}, r[1].ID) ||
			math.Abs(r[0].Weight-tc.w) > 1e-7 || math.Abs(r[1].Weight-tc.w) > 1e-7 {
			t.Fatalf("%s %v: reasons for z = %+v, want x and y with equal weights", tc.name, tc.p.Extra, r)
		}
	}
}
