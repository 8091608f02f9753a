package mf

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/eval"
)

// BenchmarkTune_pointCost checks the point-cost formulas
// (recsys.Kind.PointCost, GridCost) against the clock: every kind with a
// grid and no search of its own searches two points on generated data of
// MovieLens 100K's size (943 users × 1,682 items) and of 2,000 users ×
// 9,000 items, and reports each point's measured over its predicted
// seconds as the formula alone gives them (the search's correction
// undone): first/predicted for the point that also builds the cache's
// lists, second/predicted for the other. The constants make the second
// about 1 (docs/evaluation.md "The time budget").
//
//	go test -run '^$' -bench Tune_pointCost -benchtime 1x ./recsys/mf
func BenchmarkTune_pointCost(b *testing.B) {
	ctx := context.Background()
	for _, sh := range []struct{ users, items, per int }{{943, 1682, 60}, {2000, 9000, 40}} {
		x := generated(b, 5, sh.users, sh.items, sh.per)
		d := &eval.Dataset{Name: "generated"}
		for u := range x.Users() {
			d.UserIDs = append(d.UserIDs, "u"+strconv.Itoa(u))
			for _, i := range x.Row(u) {
				d.Users, d.Items = append(d.Users, uint32(u)), append(d.Items, i)
			}
		}
		for i := range x.Items() {
			d.ItemIDs = append(d.ItemIDs, "i"+strconv.Itoa(i))
		}
		split, err := eval.NewSplit(d, eval.Standard, 1, 0, eval.DefaultMinPositives)
		if err != nil {
			b.Fatal(err)
		}
		// EASE takes two λ, dense on the smaller set and sparse (a dense
		// limit of 1,000 items) on the larger.
		ease := []map[string]float64{{"lambda": 100}, {"lambda": 1000}}
		if sh.items > 2000 {
			ease = []map[string]float64{{"lambda": 100, "max_dense": 1000}, {"lambda": 1000, "max_dense": 1000}}
		}
		grid := recsys.Grid{K: []int{50, 200}, SLIM: [][2]float64{{1, 1}}, Factors: []int{16, 64},
			Extra: map[string][]map[string]float64{"ease": ease, "rp3beta": {{"beta": 0.5}}, "ials": {{"alpha0": 0.1}},
				"wrmf": {{"alpha": 1}}, "bpr": {{"lambda": 0.0025}}, "mfauc": {{"lambda": 0.1}}}}
		for _, name := range []string{"itemknn", "kunn-i", "userknn", "kunn", "kunn-u", "slim", "ease", "rp3beta", "ials", "wrmf", "bpr", "mfauc"} {
			kind, err := recsys.KindOf(name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%dx%d/%s", sh.users, sh.items, name), func(b *testing.B) {
				var first, second float64
				for b.Loop() {
					// A fresh cache, so that the first point builds the
					// lists as a search's first fit does.
					cache := recsys.NewNeighbourCache(split.Train, 200)
					tuned, err := eval.Tune(ctx, name, split, cache, eval.Tuning{Grid: grid, Extend: -1})
					if err != nil {
						b.Fatal(err)
					}
					p := tuned.Points
					if len(p) != 2 || p[0].Predicted <= 0 {
						b.Fatalf("points %+v, want two predicted", p)
					}
					// A batch (FitGrid) is predicted at once, before any
					// point is measured; otherwise the second point's
					// prediction is its formula × the first's ratio.
					formula := p[1].Predicted
					if kind.FitGrid == nil || name == "ease" && sh.items <= 2000 {
						formula *= p[0].Predicted / p[0].Measured
					}
					first, second = p[0].Measured/p[0].Predicted, p[1].Measured/formula
				}
				b.ReportMetric(first, "first/predicted")
				b.ReportMetric(second, "second/predicted")
			})
		}
	}
}
