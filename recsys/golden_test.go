package recsys_test

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/blob/blobtest"
	"github.com/recsys-engine/recsys/recsys/febr" // registers febr, its variants and febr-blend
	_ "github.com/recsys-engine/recsys/recsys/mf" // registers bpr, wrmf, ials and mfauc
)

// Models persisted by an earlier release must still load and re-encode to
// the same bytes: testdata/golden holds one small model of every
// registered kind (recsys/mf's and recsys/febr's too, hence this external
// test package) as the codec of that release wrote it. The same model
// fitted now must score as the loaded one does, so a field read into the
// wrong place is caught too, not only a misplaced byte.
func TestLoad_golden(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 7))
	var pairs []recsys.Pair
	for u := range 14 {
		for i := range 10 {
			if rng.Float64() < 0.35 {
				pairs = append(pairs, recsys.Pair{User: uint32(u), Item: uint32(i)})
			}
		}
	}
	x, err := recsys.NewMatrix(14, 10, pairs)
	if err != nil {
		t.Fatal(err)
	}
	type golden struct {
		file, model string
		p           recsys.Params
	}
	var cases []golden
	for _, name := range recsys.Names() {
		p := recsys.Params{K: 3, L1: 0.5, L2: 1, Options: &febr.Options{Iterations: 300}}
		switch name {
		case "bpr", "wrmf", "ials", "mfauc":
			p = recsys.Params{K: 2, Extra: map[string]float64{"epochs": 2}}
		case "ease":
			p = recsys.Params{Extra: map[string]float64{"lambda": 2}}
		case "rp3beta":
			p = recsys.Params{K: 3, Extra: map[string]float64{"beta": 0.5}}
		}
		cases = append(cases, golden{name, name, p})
	}
	// MFAUC writes its importance weights only when τ > 0.
	// EASE above its dense limit keeps sparse lists.
	cases = append(cases, golden{"ease-sparse", "ease", recsys.Params{K: 3, Extra: map[string]float64{"lambda": 2, "max_dense": 0}}})
	cases = append(cases, golden{"mfauc-tau", "mfauc", recsys.Params{K: 2, Extra: map[string]float64{"epochs": 2, "tau": 1}}})
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			m, err := recsys.New(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Fit(context.Background(), x, tc.p); err != nil {
				t.Fatal(err)
			}
			data := blobtest.Golden(t, filepath.Join("testdata", "golden", tc.file+".bin"), m)
			back := blobtest.Reencode(t, data, recsys.Load)
			close9 := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a)) }
			got, want := recsys.ParamsOf(back), recsys.ParamsOf(m)
			for k, v := range want {
				if g, ok := got[k]; !ok || !close9(v, g) || len(got) != len(want) {
					t.Fatalf("parameters %v, fitted %v", got, want)
				}
			}
			a, b := make([]float64, x.Items()), make([]float64, x.Items())
			for u := range x.Users() {
				recsys.ScoreUser(m, u, x.Row(u), a)
				recsys.ScoreUser(back, u, x.Row(u), b)
				for i := range a {
					if !close9(a[i], b[i]) {
						t.Fatalf("user %d item %d: fitted score %v, loaded %v", u, i, a[i], b[i])
					}
				}
			}
		})
	}
}
