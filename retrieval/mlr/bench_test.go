package mlr

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/internal/fixture"
)

// BenchmarkMLRIteration measures one cutting-plane round of Algorithm 1 on
// n = 500 items in d = 20 with 5 classes: the separation oracles for every
// query (steps 4–6) and the working-set solve (step 3) with the default
// projected sub-gradient solver.
func BenchmarkMLRIteration(b *testing.B) {
	n, d := 500, 20
	rng := rand.New(rand.NewPCG(3, 4))
	x, sup := fixture.Shifted(rng, n, d, 5, 0.5, 2)
	p := Problem{X: x, Sup: sup}
	w0 := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		w0.SetSym(i, i, 0.1)
	}
	for _, loss := range Losses {
		b.Run(loss, func(b *testing.B) {
			o := Oracle{Loss: loss}
			first, err := Separate(context.Background(), p, o, w0, 1)
			if err != nil {
				b.Fatal(err)
			}
			ws := []Constraint{first}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				con, err := Separate(context.Background(), p, o, w0, 1)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := (Subgradient{}).Solve(context.Background(), append(ws, con), 10, w0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
