package mf

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/recsys-engine/recsys/recsys"
)

// fitConcurrently is a Kind.FitGrid for a model whose Fit runs on one
// core (bpr's SGD): the candidates are fitted GOMAXPROCS at a time
// instead of one after another, each as one Fit, seeded as it is, so the
// models are those of a Fit per candidate. At 20M events bpr's tuning and
// refit took 293 s of wall time for 299 CPU s, beside an idle core
// (docs/scale-log.md, fourth pass).
func fitConcurrently(newModel func() recsys.Model) func(ctx context.Context, x *recsys.Matrix, cands []recsys.Params) ([]func() recsys.Model, error) {
	return func(ctx context.Context, x *recsys.Matrix, cands []recsys.Params) ([]func() recsys.Model, error) {
		models := make([]recsys.Model, len(cands))
		errs := make([]error, len(cands))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), len(cands)) {
			wg.Go(func() {
				for c := int(next.Add(1)) - 1; c < len(cands) && ctx.Err() == nil; c = int(next.Add(1)) - 1 {
					m := newModel()
					if errs[c] = m.Fit(ctx, x, cands[c]); errs[c] == nil {
						models[c] = m
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out := make([]func() recsys.Model, len(cands))
		for c := range cands {
			out[c] = func() recsys.Model {
				m := models[c]
				models[c] = nil // held by the search alone from here
				return m
			}
		}
		return out, nil
	}
}
