package ltr

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
)

// Stop says why training ended.
type Stop string

const (
	StopTrees    Stop = "trees"    // Options.Trees trees were fitted
	StopPatience Stop = "patience" // Patience trees did not improve the validation measure
	StopNoSplit  Stop = "no split" // no leaf could be split: later trees would be the same
)

// Report describes a training run. Train[t] and Valid[t] are the mean
// measure (Options.Measure) over the queries with a relevant candidate of
// the model of the first t trees, t = 0 (every score 0, candidates in
// index order) up to the trees fitted.
type Report struct {
	Measure Measure
	Train   []float64
	Valid   []float64 // nil without validation queries
	Fitted  int       // trees fitted
	Trees   int       // trees kept: the first t of the best Valid[t], or all fitted without validation
	Stop    Stop
}

// Train fits a LambdaMART model to the training queries (Burges 2010 §7,
// Alg. 1): each tree is fitted to the λ-gradients of the current scores,
// its leaves take Newton steps, and the validation queries choose the
// number of trees to keep. valid may be empty (Queries{}); otherwise it
// has the training rows' features and a relevant candidate somewhere.
// The context is checked between trees and during the gradients; when it
// is done, Train returns its error and no model.
func Train(ctx context.Context, train, valid Queries, opt Options) (*Model, Report, error) {
	if err := opt.Validate(); err != nil {
		return nil, Report{}, err
	}
	opt = opt.withDefaults()
	if err := train.Validate(); err != nil {
		return nil, Report{}, fmt.Errorf("%w, in the training queries", err)
	}
	if train.Rows() == 0 {
		return nil, Report{}, errors.New("ltr: no training rows")
	}
	if valid.Len() > 0 {
		if err := valid.Validate(); err != nil {
			return nil, Report{}, fmt.Errorf("%w, in the validation queries", err)
		}
		if valid.D != train.D {
			return nil, Report{}, fmt.Errorf("ltr: validation rows have %d features, training rows %d", valid.D, train.D)
		}
		if !slices.Contains(valid.Labels, 1) {
			return nil, Report{}, errors.New("ltr: no validation query has a relevant candidate")
		}
	}
	t := newTrainer(&train, &valid, opt)
	return t.run(ctx)
}

// trainer holds the state of one training run.
type trainer struct {
	opt          Options
	dc           discount
	train, valid *Queries
	grower       *grower
	model        *Model
	s, lam, w    []float64 // training scores, λ and weights per row
	sv           []float64 // validation scores per row
	zq           []float64 // per-query measure scratch
	okq          []bool
}

func newTrainer(train, valid *Queries, opt Options) *trainer {
	b := newBinner(train, opt.Bins, opt.BinSample, opt.Seed)
	n := train.Rows()
	return &trainer{
		opt: opt, dc: discount{measure: opt.Measure, k: opt.K},
		train: train, valid: valid,
		grower: newGrower(opt, b.apply(train), b, n),
		model:  &Model{d: train.D},
		s:      make([]float64, n), lam: make([]float64, n), w: make([]float64, n),
		sv:  make([]float64, valid.Rows()),
		zq:  make([]float64, max(train.Len(), valid.Len())),
		okq: make([]bool, max(train.Len(), valid.Len())),
	}
}

func (t *trainer) run(ctx context.Context) (*Model, Report, error) {
	rep := Report{Measure: t.opt.Measure, Stop: StopTrees}
	hasValid := t.valid.Len() > 0
	best := 0
	for tree := 0; ; tree++ {
		if err := ctx.Err(); err != nil {
			return nil, Report{}, err
		}
		z, err := t.lambdas(ctx)
		if err != nil {
			return nil, Report{}, err
		}
		rep.Train = append(rep.Train, z)
		if hasValid {
			rep.Valid = append(rep.Valid, t.validMeasure())
			if rep.Valid[tree] > rep.Valid[best] {
				best = tree
			}
			if tree-best >= t.opt.Patience {
				rep.Stop = StopPatience
				break
			}
		}
		if tree == t.opt.Trees {
			break
		}
		nodes, segs := t.grower.grow(t.lam, t.w)
		if len(nodes) == 1 {
			rep.Stop = StopNoSplit
			break
		}
		t.add(nodes, segs)
	}
	rep.Fitted = t.model.Trees()
	rep.Trees = rep.Fitted
	if hasValid {
		rep.Trees = best
		t.model.truncate(best)
	}
	return t.model, rep, nil
}

// lambdas computes the λ-gradients and weights of every training row under
// the current scores and returns the mean training measure.
func (t *trainer) lambdas(ctx context.Context) (float64, error) {
	q := t.train
	sigma := t.opt.Sigma
	err := recsys.ParallelFor(ctx, q.Len(), 64, "", nil, func() func(lo, hi int) {
		var sc queryScratch
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				a, b := q.Query(i)
				t.zq[i], t.okq[i] = queryLambdas(t.s[a:b], q.Labels[a:b], t.lam[a:b], t.w[a:b], sigma, t.dc, &sc)
			}
		}
	})
	if err != nil {
		return 0, err
	}
	return meanOK(t.zq[:q.Len()], t.okq[:q.Len()]), nil
}

// validMeasure is the mean validation measure under the current scores.
func (t *trainer) validMeasure() float64 {
	q := t.valid
	var sc queryScratch
	for i := range q.Len() {
		a, b := q.Query(i)
		t.zq[i], t.okq[i] = queryMeasure(t.sv[a:b], q.Labels[a:b], t.dc, &sc)
	}
	return meanOK(t.zq[:q.Len()], t.okq[:q.Len()])
}

// meanOK is the mean of z over the entries with ok set, 0 when none.
func meanOK(z []float64, ok []bool) float64 {
	s, n := 0.0, 0
	for i, v := range z {
		if ok[i] {
			s += v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// add appends a grown tree to the model and adds its outputs to the
// training and validation scores, in the order Model.Score sums them so
// that the scores stay equal to the model's.
func (t *trainer) add(nodes []node, segs []segment) {
	m := t.model
	base := int32(len(m.nodes))
	for _, n := range nodes {
		if n.feature >= 0 {
			n.left += base
			n.right += base
		}
		m.nodes = append(m.nodes, n)
	}
	m.roots = append(m.roots, base)
	for _, sg := range segs {
		v := nodes[sg.node].value
		for _, r := range t.grower.rows[sg.lo:sg.hi] {
			t.s[r] += v
		}
	}
	d := t.valid.D
	for r := range t.sv {
		t.sv[r] += m.leaf(base, t.valid.X[r*d:(r+1)*d]).value
	}
}

// truncate keeps the first k trees.
func (m *Model) truncate(k int) {
	if k < len(m.roots) {
		m.nodes = m.nodes[:m.roots[k]:m.roots[k]]
		m.roots = m.roots[:k:k]
	}
}
