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
