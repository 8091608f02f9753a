package retrieval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/frml"
	"github.com/recsys-engine/recsys/retrieval/mlr"
	"github.com/recsys-engine/recsys/retrieval/rank"
	"github.com/recsys-engine/recsys/retrieval/rmlr"
)

// Method names (docs/design.md#retrieval, #evaluation).
const (
	MethodEuclidean    = "euclidean"
	MethodMLRAUC       = "mlr-auc"
	MethodMLRMAP       = "mlr-map"
	MethodMLRMRR       = "mlr-mrr"
	MethodMLRNDCG      = "mlr-ndcg"
	MethodMLRPrecision = "mlr-p@k"
	MethodRMLR         = "rmlr"
	MethodFRML         = "frml"
	MethodFRMLAUC      = "frml-auc"
)

// Methods lists every method in report order.
var Methods = []string{
	MethodEuclidean, MethodMLRAUC, MethodMLRMAP, MethodMLRMRR, MethodMLRNDCG,
	MethodMLRPrecision, MethodRMLR, MethodFRML, MethodFRMLAUC,
}

// CheckMethod reports an unknown method name.
func CheckMethod(name string) error {
	if slices.Contains(Methods, name) {
		return nil
	}
	return fmt.Errorf("retrieval: unknown method %q (want one of %s)", name, strings.Join(Methods, ", "))
}

// Supervision says which items are relevant to which (X⁺q); see FromLabels
// and FromNeighbours.
type Supervision = rank.Supervision

// FromLabels: items with the same class label are relevant to each other.
// Labels are small non-negative integers.
func FromLabels(labels []int) (*Supervision, error) { return rank.FromLabels(labels) }

// FromNeighbours: X⁺q is neighbours[q], e.g. the item's collaborative
// k-nearest neighbours (dense item indices), so that a content metric
// learns to mimic collaborative similarity (dissertation §3.2). Items with an
// empty list are never queries but still count as irrelevant to others, so
// learn on items with collaborative data and project cold items afterwards.
func FromNeighbours(neighbours [][]int) (*Supervision, error) {
	return rank.FromNeighbours(len(neighbours), neighbours)
}

// Params are the hyper-parameters of one fit; zero values take defaults.
type Params struct {
	// Rank is FRML's m (default min(d, 32)).
	Rank int
	// Kappa is FRML's κ with β = κ·|X⁻q| (default 1).
	Kappa float64
	// Lambda is FRML's Ω_L weight λ (default 0.1).
	Lambda float64
	// C is the MLR / R-MLR slack trade-off (default 1).
	C float64
	// RowSparsity is R-MLR's ℓ2,1 weight λ (default 0.1).
	RowSparsity float64
	// K is the cut-off of the p@k and ndcg oracles (default 10).
	K int
}

// LearnOptions configures Learn.
type LearnOptions struct {
	// Method is one of Methods (default frml).
	Method string
	Params
	// FRML: queries drawn (default 100,000), iterations between step-size
	// choices (default 5,000), initial step sizes, or a schedule to replay.
	Iterations, Segment int
	Etas, Schedule      []float64
	// ValidationFraction of the queries is held out (kept as items, never
	// drawn as queries) to choose FRML's step size on MAP (default 0.1).
	ValidationFraction float64
	// MLR / R-MLR: cutting-plane accuracy ε (default 0.01) and round cap
	// (default 100).
	Epsilon   float64
	MaxRounds int
	Seed      uint64
	// Workers for MLR's separation oracles (default GOMAXPROCS).
	Workers int
	// Progress, when set, receives coarse progress.
	Progress func(stage string, done, total int)
}

// Learn learns a metric on the feature vectors X (one row per item, raw
// values; z-scoring statistics are computed here and stored in the Metric)
// supervised by sup over the same items.
func Learn(ctx context.Context, X [][]float64, sup *Supervision, opt LearnOptions) (*Metric, error) {
	if sup == nil || sup.Len() != len(X) {
		return nil, errors.New("retrieval: supervision must cover every row of X")
	}
	if opt.Method == "" {
		opt.Method = MethodFRML
	}
	if err := CheckMethod(opt.Method); err != nil {
		return nil, err
	}
	mean, scale, err := Standardization(X)
	if err != nil {
		return nil, err
	}
	if opt.Method == MethodEuclidean {
		return Euclidean(mean, scale), nil
	}
	xs := Standardize(X, mean, scale)
	queries := sup.Queries()
	var val frml.Validator
	if IsFRML(opt.Method) && len(opt.Schedule) == 0 {
		frac := opt.ValidationFraction
		if frac <= 0 {
			frac = 0.1
		}
		rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed))
		perm := slices.Clone(queries)
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		nVal := min(int(frac*float64(len(perm))+0.5), 500)
		if nVal >= 1 && len(perm)-nVal >= 1 {
			held := perm[:nVal]
			queries = perm[nVal:]
			slices.Sort(queries)
			val = HeldOutMAP(xs, sup, held)
		}
	}
	l, _, err := FitFactor(ctx, xs, sup, queries, opt, val)
	if err != nil {
		return nil, err
	}
	// Standardised inputs are bounded, so a non-finite factor is a learner
	// fault; a metric with one would answer NaN distances.
	rows, _ := l.Dims()
	for i := range rows {
		for _, v := range l.RawRowView(i) {
			if !isFinite(v) {
				return nil, fmt.Errorf("retrieval: %s learned a metric with a non-finite entry", opt.Method)
			}
		}
	}
	return &Metric{Method: opt.Method, Mean: mean, Scale: scale, L: l}, nil
}

// IsFRML reports whether method is learned by FRML, which chooses its step
// size on a validation MAP and replays the chosen schedule.
func IsFRML(method string) bool { return method == MethodFRML || method == MethodFRMLAUC }

// FitFactor trains the factor L on standardised rows x (Standardize) with
// the given training queries and, for FRML, the validator that chooses the
// step size. It also returns FRML's step-size schedule. Learn calls it
// after z-scoring and holding out validation queries; the offline
// evaluation (retrieval/eval) calls it with its own split and validator.
func FitFactor(ctx context.Context, x *mat.Dense, sup *Supervision, queries []int, opt LearnOptions, val frml.Validator) (*mat.Dense, []float64, error) {
	_, d := x.Dims()
	progress := func(stage string, done, total int) {
		if opt.Progress != nil {
			opt.Progress(stage, done, total)
		}
	}
	switch opt.Method {
	case MethodEuclidean:
		l := mat.NewDense(d, d, nil)
		for i := 0; i < d; i++ {
			l.Set(i, i, 1)
		}
		return l, nil, nil
	case MethodFRML, MethodFRMLAUC:
		fo := frml.Options{
			Rank: opt.Rank, Kappa: opt.Kappa, AUC: opt.Method == MethodFRMLAUC, Lambda: opt.Lambda,
			Iterations: opt.Iterations, Segment: opt.Segment, Etas: opt.Etas, Schedule: opt.Schedule,
			Seed: opt.Seed,
		}
		iters, seg := cmp.Or(fo.Iterations, 100_000), cmp.Or(fo.Segment, 5_000)
		segs := (iters + seg - 1) / seg
		if len(fo.Schedule) > 0 {
			segs = len(fo.Schedule)
		}
		fo.Progress = func(s int, _, _ float64) { progress(opt.Method, s+1, segs) }
		res, err := frml.Train(ctx, frml.Problem{X: x, Sup: sup, Queries: queries}, val, fo)
		if err != nil {
			return nil, nil, err
		}
		return res.L, res.Schedule, nil
	}
	p := mlr.Problem{X: x, Sup: sup, Queries: queries}
	maxRounds := cmp.Or(opt.MaxRounds, 100)
	prog := func(round int, _, _ float64) { progress(opt.Method, round, maxRounds) }
	var res *mlr.Result
	var err error
	if opt.Method == MethodRMLR {
		res, err = rmlr.Train(ctx, p, rmlr.Options{
			C: opt.C, Lambda: cmp.Or(opt.RowSparsity, 0.1), K: opt.K,
			Epsilon: opt.Epsilon, MaxIter: maxRounds, Workers: opt.Workers, Progress: prog,
		})
	} else {
		res, err = mlr.Train(ctx, p, mlr.Options{
			Oracle: mlr.Oracle{Loss: strings.TrimPrefix(opt.Method, "mlr-"), K: opt.K},
			C:      opt.C, Epsilon: opt.Epsilon, MaxIter: maxRounds, Workers: opt.Workers, Progress: prog,
		})
	}
	if err != nil {
		return nil, nil, err
	}
	l, err := rank.Factor(res.W, 0)
	return l, nil, err
}

// HeldOutMAP scores L by the mean average precision of the held-out items as
// queries against all other items (a validator for FitFactor).
func HeldOutMAP(x *mat.Dense, sup *Supervision, held []int) frml.Validator {
	return func(l *mat.Dense) float64 {
		var y mat.Dense
		y.Mul(x, l)
		n, _ := y.Dims()
		dist := make([]float64, n)
		total := 0.0
		for _, q := range held {
			yq := y.RawRowView(q)
			for i := 0; i < n; i++ {
				dist[i] = SqDist(yq, y.RawRowView(i))
			}
			total += apByCounting(dist, q, sup)
		}
		return total / float64(len(held))
	}
}

// apByCounting is the average precision of the ranking by dist (q left out)
// without sorting all n items: with the K relevant distances sorted, the
// j-th relevant item sits at 1 + #{i : dist_i < r_j}, counted by one binary
// search per item, O(n log K). Ties count in the query's favour.
func apByCounting(dist []float64, q int, sup *Supervision) float64 {
	var rel []float64
	for _, x := range sup.Relevant(q) {
		if int(x) != q {
			rel = append(rel, dist[x])
		}
	}
	if len(rel) == 0 {
		return 0
	}
	slices.Sort(rel)
	before := make([]int, len(rel)+1) // before[j]: items with r_{j−1} ≤ d < r_j
	for i, d := range dist {
		if i == q {
			continue
		}
		j, _ := slices.BinarySearch(rel, d)
		for j < len(rel) && rel[j] <= d { // first r_j > d
			j++
		}
		before[j]++
	}
	ap, cum := 0.0, 0
	for j := range rel {
		cum += before[j]
		// cum counts items strictly closer than r_j, including the j
		// relevant items before it.
		ap += float64(j+1) / float64(cum+1)
	}
	return ap / float64(len(rel))
}
