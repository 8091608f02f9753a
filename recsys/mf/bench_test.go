package mf

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/dataset"
	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
)

// The benchmark data: 2,000 users × 4,000 items, 50 draws per user
// (≈ 90,000 positives, skewed like real catalogues), 50 factors.
const benchFactors = 50

func benchMatrix(b *testing.B) *recsys.Matrix {
	b.Helper()
	return generated(b, 1, 2000, 4000, 50)
}

// BenchmarkBPREpoch is one BPR epoch: |X| SGD steps.
func BenchmarkBPREpoch(b *testing.B) { benchBPREpoch(b, benchMatrix(b), benchFactors) }

// benchBPREpoch runs BPR epochs on x with k factors.
func benchBPREpoch(b *testing.B, x *recsys.Matrix, k int) {
	c, _ := bprConfigFrom(recsys.Params{K: k})
	var f factors
	t := newBPRTrainer(x, &c, &f)
	for b.Loop() {
		if err := t.epoch(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(x.NNZ()), "steps/op")
}

// BenchmarkWRMFEpoch is one ALS alternation (users, then items; 3 CG steps
// per solve), in parallel on GOMAXPROCS goroutines.
func BenchmarkWRMFEpoch(b *testing.B) {
	x := benchMatrix(b)
	c, _ := wrmfConfigFrom(recsys.Params{K: benchFactors})
	var f factors
	t := newWRMFTrainer(x, &c, &f)
	for b.Loop() {
		if err := t.epoch(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWRMFExactSweep is the closing exact (Cholesky) user sweep.
func BenchmarkWRMFExactSweep(b *testing.B) {
	x := benchMatrix(b)
	c, _ := wrmfConfigFrom(recsys.Params{K: benchFactors})
	var f factors
	t := newWRMFTrainer(x, &c, &f)
	for b.Loop() {
		if err := t.sweep(context.Background(), true, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMFAUCEpoch is one MFAUC iteration (max(m, n) row and column
// steps, logistic loss, κ_W = 16, κ_Y = 10, d = 4 blocks on GOMAXPROCS
// goroutines).
func BenchmarkMFAUCEpoch(b *testing.B) {
	x := benchMatrix(b)
	for _, rho := range []float64{0, 1} {
		b.Run(fmt.Sprintf("rho=%g", rho), func(b *testing.B) {
			c, _ := aucConfigFrom(recsys.Params{K: benchFactors, Extra: map[string]float64{"rho": rho}})
			rng := rand.New(rand.NewPCG(1, 1))
			var f factors
			t := newAUCTrainer(x, &c, &f, rng)
			scratch := make([]*aucScratch, min(t.d, runtime.GOMAXPROCS(0)))
			for g := range scratch {
				scratch[g] = newAUCScratch(c.factors, c.kappaY)
			}
			for b.Loop() {
				if _, err := t.epoch(context.Background(), rng, scratch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMFScore is one recommendation: Score over the 4,000 items and
// the top 10 by recsys.TopN (a heap, no full sort), for a known training
// history (the fitted factor) and for a changed one (a fold-in).
func BenchmarkMFScore(b *testing.B) {
	x := benchMatrix(b)
	pop := x.Popularity()
	for _, name := range modelNames {
		p := recsys.Params{K: benchFactors, Extra: map[string]float64{"epochs": 2}}
		m := mustFit(b, name, x, p)
		u := 7
		known := x.Row(u)
		changed := known[1:]
		for _, h := range []struct {
			kind    string
			history []uint32
		}{{"known", known}, {"foldin", changed}} {
			b.Run(name+"/"+h.kind, func(b *testing.B) {
				scores := make([]float64, x.Items())
				for b.Loop() {
					m.Score(h.history, scores)
					if len(recsys.TopN(scores, pop, h.history, 10)) != 10 {
						b.Fatal("short list")
					}
				}
			})
		}
	}
}

// realMatrix is the positives of a shared data set (../shared/datasets).
func realMatrix(b *testing.B, format, dir string) *recsys.Matrix {
	b.Helper()
	path := filepath.Join("../../../shared/datasets", dir)
	datasettest.Require(b, path)
	pos, err := dataset.Positives(format, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	pairs := make([]recsys.Pair, len(pos.Users))
	for n := range pairs {
		pairs[n] = recsys.Pair{User: pos.Users[n], Item: pos.Items[n]}
	}
	x, err := recsys.NewMatrix(len(pos.UserIDs), len(pos.ItemIDs), pairs)
	if err != nil {
		b.Fatal(err)
	}
	return x
}

// BenchmarkIALSEpoch is one iALS alternation (users, then items) on
// MovieLens 100K and Last.fm at d = 64, 128, 256: 3 CG steps per row
// against the exact (Cholesky) solve of every row, on GOMAXPROCS
// goroutines.
func BenchmarkIALSEpoch(b *testing.B) {
	for _, ds := range []struct{ name, format, dir string }{
		{"ml-100k", "movielens", "ml-100k"}, {"lastfm", "lastfm", "lastfm-hetrec"},
	} {
		x := realMatrix(b, ds.format, ds.dir)
		for _, d := range []int{64, 128, 256} {
			for _, solver := range []struct {
				name string
				cg   float64
			}{{"cg3", 3}, {"exact", 0}} {
				b.Run(fmt.Sprintf("%s/d=%d/%s", ds.name, d, solver.name), func(b *testing.B) {
					c, err := ialsConfigFrom(recsys.Params{K: d, Extra: map[string]float64{"cg": solver.cg}})
					if err != nil {
						b.Fatal(err)
					}
					var f factors
					t := newIALSTrainer(x, &c, &f)
					for b.Loop() {
						if err := t.epoch(context.Background()); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkALSLarge is one WRMF alternation (3 CG steps per solve) and the
// exact user sweep that ends a fit, at 50 factors on BenchmarkBPREpochLarge's
// 8M positives: the other side's rows far past the caches.
func BenchmarkALSLarge(b *testing.B) {
	x := generated(b, 2, 60000, 27000, 140)
	c, _ := wrmfConfigFrom(recsys.Params{K: benchFactors})
	var f factors
	t := newWRMFTrainer(x, &c, &f)
	b.Run("epoch", func(b *testing.B) {
		for b.Loop() {
			if err := t.epoch(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exact-users", func(b *testing.B) {
		for b.Loop() {
			if err := t.sweep(context.Background(), true, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBPREpochLarge is one BPR epoch at 10 and 50 factors (the
// service's grid) on 60,000 users × 27,000 items with 140 draws each
// (≈ 8M positives): factors and pairs far past the caches, as at `recsys
// scale`'s 20M events.
func BenchmarkBPREpochLarge(b *testing.B) {
	x := generated(b, 2, 60000, 27000, 140)
	for _, k := range []int{10, 50} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) { benchBPREpoch(b, x, k) })
	}
}
