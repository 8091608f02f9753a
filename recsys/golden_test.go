package recsys

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden with the current encoder")

// Models persisted by an earlier release must still load and re-encode to
// the same bytes: testdata/golden holds one small model of each kind as
// written by the codec of that release. The same model fitted now must
// score as the loaded one does (so a field read into the wrong place is
// caught too, not only a misplaced byte).
func TestLoad_golden(t *testing.T) {
	x, _ := randomMatrix(t, 43, 14, 10, 0.35)
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			m := fitted(t, name, x, Params{K: 3, L1: 0.5, L2: 1, FEBR: &FEBROptions{Iterations: 300}})
			path := filepath.Join("testdata", "golden", name+".bin")
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
			back, err := Load(golden)
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
			if got, want := ParamsOf(back), ParamsOf(m); !mapsClose(got, want) {
				t.Fatalf("parameters %v, fitted %v", got, want)
			}
			a, b := make([]float64, x.Items()), make([]float64, x.Items())
			for u := range x.Users() {
				ScoreUser(m, u, x.Row(u), a)
				ScoreUser(back, u, x.Row(u), b)
				for i := range a {
					if !close9(a[i], b[i]) {
						t.Fatalf("user %d item %d: fitted score %v, loaded %v", u, i, a[i], b[i])
					}
				}
			}
		})
	}
}

func close9(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a)) }

func mapsClose(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !close9(v, w) {
			return false
		}
	}
	return true
}
