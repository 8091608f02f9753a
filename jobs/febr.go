package jobs

import (
	"context"

	"recsys/recsys"
	"recsys/recsys/eval"
	"recsys/recsys/metrics"
)

// DefaultFEBRLambda is the service's λ grid for FEBR, shorter than the
// evaluation's (recsys.DefaultFEBRLambdas) to keep retraining quick.
var DefaultFEBRLambda = []float64{1e-3, 1e-2}

// tuneFEBR chooses a FEBR variant's parameters on the validation split
// (recsys.SearchFEBR): k and, for the SLIM affinity, the fsSLIM constants
// by the validation ADG of the aggsum predictor OPT-ADG starts from, then
// λ by OPT-ADG stopping early on the validation ADG, which keeps
// retraining quick. The returned parameters refit on all the data with the
// iteration count that reached the chosen θ, as there are no validation
// items left to stop on.
func tuneFEBR(ctx context.Context, name string, split *eval.Split, cache *recsys.NeighbourCache, opts TrainOptions) (recsys.Params, metrics.Values, error) {
	lambdas := opts.FEBRLambda
	if len(lambdas) == 0 {
		lambdas = DefaultFEBRLambda
	}
	g := recsys.FEBRGrid{K: opts.Grid, Lambda: lambdas, SLIM: opts.SLIM, KByBaseline: true}
	seed := uint64(opts.Seed)
	p := recsys.Params{Cache: cache, FEBR: &recsys.FEBROptions{Validation: split.Validation, Seed: seed}}
	best, _, err := recsys.SearchFEBR(ctx, name, split.Train, g, p)
	if err != nil {
		return recsys.Params{}, metrics.Values{}, err
	}
	val, err := validate(ctx, best, split, opts.ValidationUsers)
	if err != nil {
		return recsys.Params{}, metrics.Values{}, err
	}
	chosen := recsys.ParamsOf(best)
	iters := best.Info().Iterations
	if iters == 0 {
		iters = -1 // the initial θ was best: run no iteration
	}
	return recsys.Params{
		K: int(chosen["k"]), L1: chosen["l1"], L2: chosen["l2"],
		FEBR: &recsys.FEBROptions{Lambda: chosen["lambda"], Iterations: iters, Seed: seed},
	}, val, nil
}
