package mf

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// bpr's grid, fitted two at a time (Kind.FitGrid), gives every candidate
// the model one Fit of it gives, byte for byte, in the candidates' order,
// and an invalid candidate fails the grid.
func TestBPRFitGrid_sameModelsAsOneFitEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	x := synthetic(t, 4, 120, 80, 4, 2)
	kind, err := recsys.KindOf("bpr")
	if err != nil || kind.FitGrid == nil {
		t.Fatalf("bpr has no FitGrid (%v)", err)
	}
	g := recsys.Grid{Factors: []int{4, 8}, Extra: map[string][]map[string]float64{
		"bpr": {{"lambda": 0.025, "epochs": 6}, {"lambda": 0.0025, "epochs": 6}}}}
	cands := kind.Candidates(g, recsys.Caps{})
	if len(cands) != 4 {
		t.Fatalf("%d candidates, want 4", len(cands))
	}
	ctx := context.Background()
	fits, err := kind.FitGrid(ctx, x, cands)
	if err != nil {
		t.Fatal(err)
	}
	var blobs [][]byte
	for c, p := range cands {
		got, err := fits[c]().MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		want, err := mustFit(t, "bpr", x, p).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("candidate %d %v: the grid's model differs from one Fit's", c, p)
		}
		for d, b := range blobs {
			if bytes.Equal(b, got) {
				t.Errorf("candidates %d and %d are the same model", d, c)
			}
		}
		blobs = append(blobs, got)
	}
	bad := append(cands[:1:1], recsys.Params{K: 4, Extra: map[string]float64{"lambda": -1}})
	if _, err := kind.FitGrid(ctx, x, bad); err == nil {
		t.Error("a grid with a negative λ fitted")
	}
}
