package febr

import (
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// The blend's refit takes the job's refit of a base whose parameters are
// the blend's choice for it, the same value and not a copy, and leaves to
// a fit of its own every base the job fitted with other parameters or
// did not fit.
func TestBlendReuse_refitTakesTheJobsFits(t *testing.T) {
	x := generated(t, 1, 30, 40, 5)
	pop, kunn := &recsys.Popular{}, &recsys.KUNN{}
	o := &Options{Blend: &BlendOptions{Bases: []string{"popular", "kunn", "slim"},
		Params: []recsys.Params{{}, {K: 20}, {K: 50, L1: 1, L2: 1}}}}
	fits := map[string]recsys.Fit{
		"popular": {Full: pop, FullParams: recsys.Params{}},
		"kunn":    {Full: kunn, FullParams: recsys.Params{K: 50}}, // another k
	}
	p := blendReuse.Refit(recsys.Params{Options: o}, fits, x)
	bo := p.Options.(*Options).Blend
	if len(bo.Fitted) != 3 || bo.Fitted[0] != recsys.Model(pop) || bo.Fitted[1] != nil || bo.Fitted[2] != nil || bo.FittedOn != x {
		t.Fatalf("Fitted = %v on %p, want [popular's job fit, nil, nil] on %p", bo.Fitted, bo.FittedOn, x)
	}
	if o.Blend.Fitted != nil {
		t.Fatal("the refit changed the options it was given")
	}
	fits["kunn"] = recsys.Fit{Full: kunn, FullParams: recsys.Params{K: 20, Cache: recsys.NewNeighbourCache(x, 20)}}
	bo = blendReuse.Refit(recsys.Params{Options: o}, fits, x).Options.(*Options).Blend
	if bo.Fitted[1] != recsys.Model(kunn) {
		t.Fatal("a base fitted with the blend's k (and the job's cache) was not taken")
	}
}

// The blend's search takes the bases the job tuned on the split, at any
// scale, so that no base is searched twice; θ is learnt on the split's
// validation items above the scale threshold only (below it, on the
// blend's own holdout). It fails if the search takes the job's choices
// at scale alone.
func TestBlendReuse_searchTakesTheJobsTunedBases(t *testing.T) {
	x := generated(t, 1, 30, 40, 5)
	pop := &recsys.Popular{}
	kunn := &recsys.KUNN{}
	fits := map[string]recsys.Fit{
		"popular": {Tuned: pop, TunedParams: recsys.Params{}},
		"kunn":    {Tuned: kunn, TunedParams: recsys.Params{K: 20, Cache: recsys.NewNeighbourCache(x, 20)}},
	}
	val := make([][]uint32, x.Users())
	val[3] = []uint32{7}
	for _, large := range []bool{false, true} {
		bo := blendReuse.Search(nil, fits, recsys.Holdout{Train: x, Validation: val}, large).(*Options).Blend
		names := BlendBases()
		for b, n := range names {
			want := fits[n].Tuned
			if got := bo.fitted(x, b); got != want {
				t.Errorf("large=%v: base %s fitted %v, want the job's %v", large, n, got, want)
			}
			if n == "kunn" && (bo.Params[b].K != 20 || bo.Params[b].Cache != nil) {
				t.Errorf("large=%v: kunn's params %+v, want k=20 without the job's cache", large, bo.Params[b])
			}
		}
		if (bo.HeldOut != nil) != large {
			t.Errorf("large=%v: held-out items %v", large, bo.HeldOut)
		}
	}
}
