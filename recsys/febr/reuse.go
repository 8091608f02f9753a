package febr

import (
	"reflect"

	"github.com/recsys-engine/recsys/recsys"
)

// ServiceMemory is the service's bound on the feature memo
// (Options.MemoryBudget): it holds the memo of MovieLens 100K, and at 10⁶
// events and more FEBR streams instead of taking gigabytes (with the
// offline evaluation's DefaultMemory the memo took 4 GiB at 1M events,
// which the garbage collector lets double; docs/performance.md#febrs-feature-memo).
const ServiceMemory = 256 << 20

// serviceLambdas is the service's λ grid, shorter than the evaluation's
// (DefaultLambdas) to keep retraining quick.
var serviceLambdas = []float64{1e-3, 1e-2}

// serviceOptions are the options the service's FEBR fits start from.
func serviceOptions(seed uint64) recsys.Options {
	return &Options{Seed: seed, MemoryBudget: ServiceMemory}
}

// CopyOptions is a copy of o as FEBR's options, the zero options when o
// is nil or another family's: the template a search or a reuse starts
// from.
func CopyOptions(o recsys.Options) Options {
	if fo, ok := o.(*Options); ok && fo != nil {
		return *fo
	}
	return Options{}
}

// reuse is how a variant takes the job's fits: its search starts from
// the job's choices of its aggsum baselines (Options.Baselines, both
// sides' for FEBRiu, in order) and, over the SLIM affinity, from slim's
// choice (Options.SLIM); its refit takes slim's refit when the chosen k
// and fsSLIM pair are slim's.
func (v variant) reuse() *recsys.Reuse {
	return &recsys.Reuse{
		Search: func(o recsys.Options, fits map[string]recsys.Fit, _ recsys.Holdout, _ bool) recsys.Options {
			fo := CopyOptions(o)
			if v.affinity == affSLIM {
				fo.SLIM = fits["slim"].Tuned
			}
			fo.Baselines = v.tunedBaselines(fits)
			return &fo
		},
		Refit: func(p recsys.Params, fits map[string]recsys.Fit, _ *recsys.Matrix) recsys.Params {
			// The search's refit leaves Options.SLIM unset (it was fitted on
			// the split): what counts is that the job fitted slim.
			po, ok := p.Options.(*Options)
			if !ok || v.affinity != affSLIM || !sameSLIM(fits["slim"].Full, p) {
				return p
			}
			fo := *po
			fo.SLIM = fits["slim"].Full
			p.Options = &fo
			return p
		},
	}
}

// tunedBaselines are the job's choices on the validation split of v's
// baselines (Options.Baselines), in v's order; those the job did not tune
// are left out.
func (v variant) tunedBaselines(fits map[string]recsys.Fit) []recsys.Model {
	var out []recsys.Model
	for _, b := range v.baselines() {
		if m := fits[b].Tuned; m != nil {
			out = append(out, m)
		}
	}
	return out
}

// sameSLIM reports whether a slim model has the k and fsSLIM pair of p.
func sameSLIM(slim recsys.Model, p recsys.Params) bool {
	if slim == nil {
		return false
	}
	sp := recsys.ParamsOf(slim)
	return sp["k"] == float64(p.K) && sp["l1"] == p.L1 && sp["l2"] == p.L2
}

// blendReuse is how febr-blend takes the job's fits of its bases. Its
// search takes the bases the job tuned on the same split, validation
// users and criterion (validation ADG) as chosen (BlendOptions.Fitted)
// instead of searching their grids again; the others are searched as
// before. Above the scale threshold θ is then learnt on the split's
// validation items (BlendOptions.HeldOut) when every base is the job's:
// those fits never saw them, so no base is fitted again on a holdout of
// the blend's own (at 20M events that was seven more fits and their
// gigabytes); below it, on the holdout of the blend's own as before.
// Its refit takes the job's refits of the bases whose chosen parameters
// are the job's: the same fit, so the same model.
var blendReuse = &recsys.Reuse{
	Search: func(o recsys.Options, fits map[string]recsys.Fit, h recsys.Holdout, large bool) recsys.Options {
		fo := CopyOptions(o)
		names := BlendBases()
		bo := &BlendOptions{Bases: names, Params: make([]recsys.Params, len(names)), Fitted: make([]recsys.Model, len(names)),
			FittedOn: h.Train}
		if large {
			bo.HeldOut = h.Validation
		}
		for b, n := range names {
			if f, ok := fits[n]; ok && f.Tuned != nil {
				bo.Params[b], bo.Fitted[b] = bareParams(f.TunedParams), f.Tuned
			}
		}
		fo.Blend = bo
		return &fo
	},
	Refit: func(p recsys.Params, fits map[string]recsys.Fit, x *recsys.Matrix) recsys.Params {
		po, ok := p.Options.(*Options)
		if !ok || po.Blend == nil {
			return p
		}
		o := po.Blend
		bo := *o
		bo.Fitted, bo.FittedOn = make([]recsys.Model, len(o.Bases)), x
		for b, n := range o.Bases {
			if f, ok := fits[n]; ok && f.Full != nil && b < len(o.Params) && sameParams(bareParams(f.FullParams), o.Params[b]) {
				bo.Fitted[b] = f.Full
			}
		}
		fo := *po
		fo.Blend = &bo
		p.Options = &fo
		return p
	},
}

// bareParams is p without the fit's context (cache, warm start, progress).
func bareParams(p recsys.Params) recsys.Params {
	p.Cache, p.Init, p.Progress = nil, nil, nil
	return p
}

// sameParams reports whether two bases' parameters are the same fit.
func sameParams(a, b recsys.Params) bool {
	return reflect.DeepEqual(bareParams(a), bareParams(b))
}
