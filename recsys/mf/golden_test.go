package mf

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"recsys/recsys"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden with the current encoder")

// Models persisted by an earlier release must still load and re-encode to
// the same bytes: testdata/golden holds one small model of each kind as
// written by the codec of that release. The same model fitted now must
// score as the loaded one does.
func TestUnmarshalBinary_golden(t *testing.T) {
	x := randomMatrix(t, 3, 9, 7, 0.4)
	for _, tc := range []struct {
		file, model string
		extra       map[string]float64
	}{
		{"bpr", "bpr", map[string]float64{"epochs": 2}},
		{"wrmf", "wrmf", map[string]float64{"epochs": 2}},
		{"mfauc", "mfauc", map[string]float64{"epochs": 2}},
		{"mfauc-tau", "mfauc", map[string]float64{"epochs": 2, "tau": 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m := mustFit(t, tc.model, x, recsys.Params{K: 2, Extra: tc.extra})
			path := filepath.Join("testdata", "golden", tc.file+".bin")
			if *updateGolden {
				data, err := m.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			back, err := recsys.Load(golden)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			again, err := back.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(again, golden) {
				t.Fatalf("re-encoding %s gives %d bytes that differ from the %d golden ones", path, len(again), len(golden))
			}
			close9 := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a)) }
			got, want := recsys.ParamsOf(back), recsys.ParamsOf(m)
			if len(got) != len(want) {
				t.Fatalf("parameters %v, fitted %v", got, want)
			}
			for k, v := range want {
				if !close9(v, got[k]) {
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
