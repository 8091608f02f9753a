package jobs

import (
	"context"
	"maps"
	"reflect"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// The scale rule sizes the matrix factorisations' epochs by the data and
// stops their grid extension above ScalePositives, and leaves every model
// as it was at and below it (MovieLens 100K and Last.fm have ~10⁵).
func TestScaleTuning(t *testing.T) {
	for _, name := range []string{"bpr", "wrmf", "ials", "mfauc", "ease", "kunn", "febr"} {
		for _, n := range []int{100_000, ScalePositives} {
			tuning := DefaultTrainOptions.tuning(recsys.Kind{})
			want := DefaultTrainOptions.tuning(recsys.Kind{})
			if scaleTuning(name, n, &tuning) || !reflect.DeepEqual(tuning, want) {
				t.Fatalf("%s at %d positives: the rule applied", name, n)
			}
		}
	}
	// bpr: 100 epochs × 500k/|X|, rounded up, at least 5.
	for _, c := range []struct{ n, bpr, wrmf, mfauc int }{
		{ScalePositives + 1, 100, 15, 30}, // ⌈99.99998⌉
		{1_000_000, 50, 8, 15},
		{5_000_000, 10, 5, 5},
		{18_000_000, 5, 5, 5},
	} {
		for name, want := range map[string]int{"bpr": c.bpr, "wrmf": c.wrmf, "mfauc": c.mfauc} {
			tuning := DefaultTrainOptions.tuning(recsys.Kind{})
			if !scaleTuning(name, c.n, &tuning) {
				t.Fatalf("%s at %d positives: the rule did not apply", name, c.n)
			}
			if tuning.Extend >= 0 {
				t.Fatalf("%s at %d positives: Extend %d, want none", name, c.n, tuning.Extend)
			}
			settings := tuning.Grid.Extra[name]
			if wantLen := max(1, len(DefaultTrainOptions.MF[name])); len(settings) != wantLen {
				t.Fatalf("%s: %d settings, want %d", name, len(settings), wantLen)
			}
			for k, s := range settings {
				if s["epochs"] != float64(want) {
					t.Fatalf("%s at %d positives, setting %d: epochs %v, want %d", name, c.n, k, s["epochs"], want)
				}
				if defs := DefaultTrainOptions.MF[name]; len(defs) > 0 {
					rest := maps.Clone(s)
					delete(rest, "epochs")
					if !maps.Equal(rest, defs[k]) {
						t.Fatalf("%s setting %d: %v, want %v and epochs", name, k, s, defs[k])
					}
				}
			}
		}
	}
	// Above it the FEBR variants are not extended either; the blend is
	// untouched (its bases' searches follow their own rules).
	for _, name := range []string{"febr", "febr-iu-kunn"} {
		tuning, want := DefaultTrainOptions.tuning(recsys.Kind{}), DefaultTrainOptions.tuning(recsys.Kind{})
		want.Extend = -1
		if !scaleTuning(name, ScalePositives+1, &tuning) || !reflect.DeepEqual(tuning, want) {
			t.Fatalf("%s above the threshold: %+v", name, tuning)
		}
	}
	if tuning := DefaultTrainOptions.tuning(recsys.Kind{}); scaleTuning(febr.BlendName, 20_000_000, &tuning) {
		t.Fatal("the rule applied to febr-blend")
	}
	// The defaults are not mutated, and an epochs set in the grid is kept.
	for name, settings := range DefaultTrainOptions.MF {
		for _, s := range settings {
			if _, ok := s["epochs"]; ok {
				t.Fatalf("%s: the rule wrote epochs into DefaultTrainOptions", name)
			}
		}
	}
	opts := DefaultTrainOptions
	opts.MF = map[string][]map[string]float64{"wrmf": {{"epochs": 40}}}
	tuning := opts.tuning(recsys.Kind{})
	scaleTuning("wrmf", 20_000_000, &tuning)
	if e := tuning.Grid.Extra["wrmf"][0]["epochs"]; e != 40 {
		t.Fatalf("a set epochs became %v", e)
	}
	if opts.tuning(recsys.Kind{}).Extend != 0 {
		t.Fatal("the rule changed the options' Extend")
	}
}

// blendJob trains febr-blend's bases and the blend in one job on a small
// clustered data set.
func blendJob(t *testing.T) (map[string]trained, *recsys.Matrix) {
	t.Helper()
	snap := clusteredSnapshot(t, 3, 80, 14, 12)
	opts := DefaultTrainOptions
	opts.Grid = []int{5, 10, 20}
	opts.Factors = []int{4, 8}
	names := append(febr.BlendBases(), febr.BlendName)
	out, err := trainModels(context.Background(), snap, names, opts, func(string, float64) {})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]trained{}
	for _, tr := range out {
		byName[tr.served.Info.Name] = tr
	}
	x, err := snapshotMatrix(snap)
	if err != nil {
		t.Fatal(err)
	}
	return byName, x
}

// febr-blend takes the job's refits of its bases whose chosen parameters
// are the job's, at any size (the same fit, so the same model: the blend
// encodes as one fitted from scratch with its choice); above the scale
// threshold its search also takes the bases the job tuned on the split
// instead of searching their grids, so every base has the job's
// parameters.
func TestTrainModels_blendReusesTheJobsBases(t *testing.T) {
	for _, scaled := range []bool{false, true} {
		if scaled {
			defer func(n int) { scalePositives = n }(scalePositives)
			scalePositives = 100
		}
		byName, x := blendJob(t)
		if scaled != (x.NNZ() > scalePositives) {
			t.Fatalf("%d positives against the threshold %d", x.NNZ(), scalePositives)
		}
		bl := byName[febr.BlendName].served.Model.(*febr.Blend)
		reused, same := 0, 0
		params := make([]recsys.Params, len(febr.BlendBases()))
		for b, name := range febr.BlendBases() {
			base, p := bl.Base(b)
			job, _ := byName[name].served.Model.(recsys.Model)
			jobP := recsys.ParamsOf(job)
			if reflect.DeepEqual(recsys.ParamsOf(base), jobP) {
				same++
			}
			params[b] = p
			// The blend served is decoded from its blob, as is each base
			// served, so a base the blend took from the job encodes as
			// the job's (TestBlendReuse_refitTakesTheJobsFits checks that
			// the refit takes the job's fit itself).
			bb, err := base.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if string(bb) == string(blobOf(t, byName[name])) {
				reused++
			}
		}
		if reused == 0 {
			t.Fatalf("scaled=%v: no base is the job's", scaled)
		}
		if scaled && same != len(febr.BlendBases()) {
			t.Fatalf("above the threshold %d of %d bases have the job's parameters", same, len(febr.BlendBases()))
		}
		// The reused bases give the model a fit from scratch gives.
		fresh := &febr.Blend{}
		p := recsys.Params{Options: &febr.Options{Blend: &febr.BlendOptions{Bases: bl.Bases(), Params: params, Theta: bl.Theta()}}}
		if err := fresh.Fit(context.Background(), x, p); err != nil {
			t.Fatal(err)
		}
		a, _ := fresh.MarshalBinary()
		if string(a) != string(blobOf(t, byName[febr.BlendName])) {
			t.Fatalf("scaled=%v: the blend with the job's bases differs from one fitted from scratch", scaled)
		}
	}
}
