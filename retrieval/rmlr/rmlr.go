package rmlr

import (
	"context"

	"github.com/recsys-engine/recsys/retrieval/mlr"
)

// Options configures Train.
type Options struct {
	// Loss is the ranking loss of the separation oracle (default MAP, as in
	// dissertation §2.4.1).
	Loss string
	K    int
	// C is the slack trade-off and Lambda the ℓ2,1 weight λ of Eq. 2.2.
	C, Lambda float64
	// Epsilon, MaxIter: the cutting-plane stopping rule (mlr.Options).
	Epsilon float64
	MaxIter int
	// ADMMIter caps the ADMM iterations per round (early stopping, §2.3.3).
	ADMMIter int
	Workers  int
	Progress func(round int, delta, xi float64)
}

// Train runs R-MLR, dissertation Algorithm 2.1 with Algorithm 2.2 as step 3.
func Train(ctx context.Context, p mlr.Problem, opt Options) (*mlr.Result, error) {
	loss := opt.Loss
	if loss == "" {
		loss = mlr.LossMAP
	}
	return mlr.Train(ctx, p, mlr.Options{
		Oracle:   mlr.Oracle{Loss: loss, K: opt.K},
		C:        opt.C,
		Epsilon:  opt.Epsilon,
		MaxIter:  opt.MaxIter,
		Solver:   &ADMM{Lambda: opt.Lambda, MaxIter: opt.ADMMIter},
		Workers:  opt.Workers,
		Progress: opt.Progress,
	})
}
