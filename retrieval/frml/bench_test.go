package frml

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/internal/fixture"
)

// BenchmarkFRMLIteration measures one iteration of Algorithm 3.4 (one query
// drawn with β-WSS sampling; the rank-m update runs once per b = 5) on
// n = 2,000 items in d = 64 with 10 classes.
func BenchmarkFRMLIteration(b *testing.B) {
	for _, tc := range []struct {
		name  string
		m     int
		kappa float64
		auc   bool
	}{{"m=32/kappa=1", 32, 1, false}, {"m=32/kappa=0.1", 32, 0.1, false}, {"m=32/auc", 32, 1, true}, {"m=8/kappa=1", 8, 1, false}} {
		b.Run(tc.name, func(b *testing.B) {
			n, d := 2000, 64
			rng := rand.New(rand.NewPCG(1, 2))
			x, sup := fixture.Shifted(rng, n, d, 10, 0.3, 3)
			opt := Options{Rank: tc.m, Kappa: tc.kappa, AUC: tc.auc}
			opt.defaults(d)
			tr := newTrainer(Problem{X: x, Sup: sup, Queries: sup.Queries()}, opt)
			l := mat.NewDense(d, tc.m, nil)
			for i := 0; i < d; i++ {
				for j := 0; j < tc.m; j++ {
					l.Set(i, j, rng.NormFloat64()/8)
				}
			}
			// Warm up so that violators are rarer, as in real training.
			l, err := tr.run(context.Background(), l, 0.01, 5000, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if _, err := tr.run(context.Background(), l, 0.01, b.N, 1); err != nil {
				b.Fatal(err)
			}
		})
	}
}
