package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/retrieval"
	"github.com/recsys-engine/recsys/retrieval/frml"
	"github.com/recsys-engine/recsys/retrieval/rank"
)

// Metric keys of a retrieval report (docs/design.md#evaluation).
const (
	KeyKNNError = "knn_error"
	KeyMAP      = "map"
	KeyAUC      = "auc"
	KeyP1       = "p@1"
	KeyP10      = "p@10"
)

// MetricKeys lists the report columns in order.
var MetricKeys = []string{KeyKNNError, KeyMAP, KeyAUC, KeyP1, KeyP10}

// Grid holds the hyper-parameter values tried on the validation part.
type Grid struct {
	C           []float64 // MLR and R-MLR slack trade-off (default 0.1 … 1000)
	RowSparsity []float64 // R-MLR ℓ2,1 weight (default 0.01, 0.1, 1)
	Rank        []int     // FRML rank m (default ⌈d/2⌉ and d, at most 64)
	Kappa       []float64 // FRML-WARP κ (default 1, 0.1)
}

// Options configures Evaluate.
type Options struct {
	// Methods to compare (default all of Methods).
	Methods []string
	// Splits is the number of random train/test splits (default 10).
	Splits int
	Seed   int64
	// TestFraction of the items is the test set (default 0.2: seed 002's
	// 80/20 splits); ValidationFraction of the training set chooses the
	// hyper-parameters (default 0.25).
	TestFraction, ValidationFraction float64
	// KGrid are the kNN sizes tried on validation (default 1, 3, 5, 7 as in
	// dissertation §2.4.1).
	KGrid []int
	Grid  Grid
	// FRML budget: queries drawn (default 20·n, at least 20,000) and
	// iterations between step-size choices (default Iterations/20).
	FRMLIterations, FRMLSegment int
	// MLRMaxRounds caps the cutting-plane rounds (default 100).
	MLRMaxRounds int
	// MaxTrain caps the training items MLR and R-MLR learn from (a random
	// subset; 0 = all). Test queries still search the whole training set.
	MaxTrain int
	// Workers evaluate splits in parallel (default GOMAXPROCS).
	Workers int
	// Progress receives one line per finished fit.
	Progress func(line string)
}

func (o *Options) defaults() error {
	if len(o.Methods) == 0 {
		o.Methods = slices.Clone(retrieval.Methods)
	}
	for _, m := range o.Methods {
		if err := retrieval.CheckMethod(m); err != nil {
			return err
		}
	}
	if o.Splits <= 0 {
		o.Splits = 10
	}
	if o.TestFraction <= 0 || o.TestFraction >= 1 {
		o.TestFraction = 0.2
	}
	if o.ValidationFraction <= 0 || o.ValidationFraction >= 1 {
		o.ValidationFraction = 0.25
	}
	if len(o.KGrid) == 0 {
		o.KGrid = []int{1, 3, 5, 7}
	}
	if len(o.Grid.C) == 0 {
		o.Grid.C = []float64{0.1, 1, 10, 100, 1000}
	}
	if len(o.Grid.RowSparsity) == 0 {
		o.Grid.RowSparsity = []float64{0.01, 0.1, 1}
	}
	if len(o.Grid.Kappa) == 0 {
		o.Grid.Kappa = []float64{1, 0.1}
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return nil
}

// config is one point of the grid.
type config struct {
	retrieval.Params
}

func (o *Options) configs(method string, d int) []config {
	ranks := o.Grid.Rank
	if len(ranks) == 0 {
		ranks = []int{min(64, max(1, (d+1)/2)), min(64, d)}
	}
	ranks = uniqueInts(ranks, d)
	var out []config
	switch method {
	case retrieval.MethodEuclidean:
		out = append(out, config{})
	case retrieval.MethodRMLR:
		for _, c := range o.Grid.C {
			for _, s := range o.Grid.RowSparsity {
				out = append(out, config{Params: retrieval.Params{C: c, RowSparsity: s}})
			}
		}
	case retrieval.MethodFRML:
		for _, m := range ranks {
			for _, k := range o.Grid.Kappa {
				out = append(out, config{Params: retrieval.Params{Rank: m, Kappa: k}})
			}
		}
	case retrieval.MethodFRMLAUC:
		for _, m := range ranks {
			out = append(out, config{Params: retrieval.Params{Rank: m}})
		}
	default: // MLR variants
		for _, c := range o.Grid.C {
			out = append(out, config{Params: retrieval.Params{C: c}})
		}
	}
	return out
}

func uniqueInts(v []int, d int) []int {
	var out []int
	for _, x := range v {
		x = min(max(x, 1), d)
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// splitResult is one method on one split.
type splitResult struct {
	metrics map[string]float64
	params  map[string]float64
	seconds float64
}

// Evaluate runs the retrieval protocol of seed 002 §5.1 on a labelled data
// set: per split, a random 80/20 train/test split; features z-scored with
// training statistics; every hyper-parameter (the grid, FRML's step size and
// the kNN size k) chosen on a validation part of the training set — the
// configuration with the best validation MAP, then the k with the lowest
// validation kNN error; the chosen configuration retrained on the whole
// training set (FRML replays its validated step-size schedule); and the test
// points used as queries against the training set, relevant = same class.
// The report has one row per method with the mean (standard error) over
// splits of kNN error, MAP, AUC, P@1 and P@10.
func Evaluate(ctx context.Context, ds *Dataset, opt Options) (*api.Report, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if ds == nil || len(ds.X) < 10 {
		return nil, errors.New("retrieval: need at least 10 labelled items")
	}
	if len(ds.Labels) != len(ds.X) {
		return nil, errors.New("retrieval: labels do not match rows")
	}
	start := time.Now()
	results := make([][]splitResult, opt.Splits) // [split][method]
	var mu sync.Mutex
	say := func(format string, args ...any) {
		if opt.Progress != nil {
			mu.Lock()
			opt.Progress(fmt.Sprintf(format, args...))
			mu.Unlock()
		}
	}
	jobs := make(chan int)
	errs := make(chan error, opt.Workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				r, err := evalSplit(ctx, ds, &opt, s, max(1, runtime.GOMAXPROCS(0)/opt.Workers), say)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				results[s] = r
			}
		}()
	}
	go func() {
		defer close(jobs)
		for s := 0; s < opt.Splits; s++ {
			select {
			case jobs <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &api.Report{
		Kind:     "retrieval",
		Dataset:  ds.Name,
		Protocol: fmt.Sprintf("%d/%d random splits, validation %.0f%% of training", int(math.Round(100*(1-opt.TestFraction))), int(math.Round(100*opt.TestFraction)), 100*opt.ValidationFraction),
		Splits:   opt.Splits,
		Seed:     opt.Seed,
		Seconds:  time.Since(start).Seconds(),
	}
	for mi, method := range opt.Methods {
		row := api.ReportRow{Method: method, Params: map[string]float64{}, Metrics: map[string]api.MetricValue{}}
		for _, key := range MetricKeys {
			v := make([]float64, opt.Splits)
			for s := range results {
				v[s] = results[s][mi].metrics[key]
			}
			row.Metrics[key] = meanSE(v)
		}
		secs := 0.0
		paramVals := map[string][]float64{}
		for s := range results {
			secs += results[s][mi].seconds
			for k, v := range results[s][mi].params {
				paramVals[k] = append(paramVals[k], v)
			}
		}
		row.TrainSeconds = secs / float64(opt.Splits)
		for k, v := range paramVals {
			row.Params[k] = mode(v)
		}
		row.Settings = map[string]string{"selection": "validation MAP, then k by validation kNN error", "params": "most frequent choice over splits"}
		if loss, ok := strings.CutPrefix(method, "mlr-"); ok {
			row.Settings["loss"] = loss
		}
		if method == retrieval.MethodRMLR {
			row.Settings["loss"] = "map"
		}
		if opt.MaxTrain > 0 && !retrieval.IsFRML(method) && method != retrieval.MethodEuclidean {
			row.Settings["max_train"] = fmt.Sprint(opt.MaxTrain)
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// evalSplit evaluates every method on split s.
func evalSplit(ctx context.Context, ds *Dataset, opt *Options, s, workers int, say func(string, ...any)) ([]splitResult, error) {
	n := len(ds.X)
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), uint64(s)))
	perm := rng.Perm(n)
	nTest := int(math.Round(opt.TestFraction * float64(n)))
	test, train := perm[:nTest], perm[nTest:]
	nVal := int(math.Round(opt.ValidationFraction * float64(len(train))))
	val, fitPart := train[:nVal], train[nVal:]

	sel := newSplitData(ds, fitPart, val)
	fin := newSplitData(ds, train, test)
	d := len(ds.X[0])
	out := make([]splitResult, len(opt.Methods))
	for mi, method := range opt.Methods {
		// Hyper-parameters on the validation part.
		var best config
		bestMAP, bestK := math.Inf(-1), opt.KGrid[0]
		for _, cfg := range opt.configs(method, d) {
			lo := opt.learnOptions(method, cfg, n, uint64(opt.Seed)<<16^uint64(s), workers)
			t0 := time.Now()
			l, err := sel.fit(ctx, lo, opt.MaxTrain, nil, rng)
			if err != nil {
				return nil, fmt.Errorf("split %d %s: %w", s, method, err)
			}
			sc := sel.score(l, opt.KGrid)
			say("split %d/%d %s %s: validation MAP %.4f (%.1fs)", s+1, opt.Splits, method, cfg.describe(method), sc.MAP, time.Since(t0).Seconds())
			if sc.MAP > bestMAP {
				bestMAP, best = sc.MAP, cfg
				bestK = opt.KGrid[argminFirst(sc.KNNErr)]
			}
		}
		// Retrain on the whole training set; test against it.
		lo := opt.learnOptions(method, best, n, uint64(opt.Seed)<<16^uint64(s), workers)
		held := make([]int, nVal) // the validation part comes first in train
		for i := range held {
			held[i] = i
		}
		t0 := time.Now()
		l, err := fin.fit(ctx, lo, opt.MaxTrain, held, rng)
		if err != nil {
			return nil, fmt.Errorf("split %d %s: %w", s, method, err)
		}
		secs := time.Since(t0).Seconds()
		sc := fin.score(l, []int{bestK})
		say("split %d/%d %s: test kNN error %.4f MAP %.4f (k=%d, %s, %.1fs)", s+1, opt.Splits, method, sc.KNNErr[0], sc.MAP, bestK, best.describe(method), secs)
		out[mi] = splitResult{
			metrics: map[string]float64{KeyKNNError: sc.KNNErr[0], KeyMAP: sc.MAP, KeyAUC: sc.AUC, KeyP1: sc.P1, KeyP10: sc.P10},
			params:  best.paramMap(method, bestK, l),
			seconds: secs,
		}
	}
	return out, nil
}

func (o *Options) learnOptions(method string, cfg config, n int, seed uint64, workers int) retrieval.LearnOptions {
	iters := o.FRMLIterations
	if iters <= 0 {
		iters = max(20_000, 20*n)
	}
	seg := cmp.Or(o.FRMLSegment, max(1, iters/20))
	return retrieval.LearnOptions{
		Method: method, Params: cfg.Params, Iterations: iters, Segment: seg,
		MaxRounds: o.MLRMaxRounds, Seed: seed, Workers: workers,
	}
}

func (c config) describe(method string) string {
	switch method {
	case retrieval.MethodFRML:
		return fmt.Sprintf("m=%d κ=%g", c.Rank, c.Kappa)
	case retrieval.MethodFRMLAUC:
		return fmt.Sprintf("m=%d", c.Rank)
	case retrieval.MethodRMLR:
		return fmt.Sprintf("C=%g λ=%g", c.C, c.RowSparsity)
	case retrieval.MethodEuclidean:
		return "-"
	}
	return fmt.Sprintf("C=%g", c.C)
}

func (c config) paramMap(method string, k int, l *mat.Dense) map[string]float64 {
	_, m := l.Dims()
	p := map[string]float64{"k": float64(k), "rank": float64(m)}
	switch method {
	case retrieval.MethodFRML:
		p["kappa"] = c.Kappa
		p["lambda"] = cmp.Or(c.Lambda, 0.1)
	case retrieval.MethodFRMLAUC:
		p["lambda"] = cmp.Or(c.Lambda, 0.1)
	case retrieval.MethodRMLR:
		p["C"] = c.C
		p["lambda"] = c.RowSparsity
	case retrieval.MethodEuclidean:
	default:
		p["C"] = c.C
	}
	return p
}

// splitData is a database part (items the metric is learnt on and searched)
// and a query part, z-scored with the database part's statistics.
type splitData struct {
	db, q             *mat.Dense
	dbLabels, qLabels []int
	sup               *retrieval.Supervision
}

func newSplitData(ds *Dataset, dbIdx, qIdx []int) *splitData {
	pick := func(idx []int) ([][]float64, []int) {
		x := make([][]float64, len(idx))
		l := make([]int, len(idx))
		for i, j := range idx {
			x[i], l[i] = ds.X[j], ds.Labels[j]
		}
		return x, l
	}
	dbX, dbL := pick(dbIdx)
	qX, qL := pick(qIdx)
	mean, scale, _ := retrieval.Standardization(dbX)
	sup, _ := retrieval.FromLabels(dbL)
	return &splitData{db: retrieval.Standardize(dbX, mean, scale), q: retrieval.Standardize(qX, mean, scale), dbLabels: dbL, qLabels: qL, sup: sup}
}

// fit learns on the database part. FRML chooses its step size on the
// validation MAP of the query part or, when held is given, of those database
// items, which are then kept out of the training queries (they stay in the
// database). MLR-type methods learn from at most maxTrain random database
// items.
func (sd *splitData) fit(ctx context.Context, lo retrieval.LearnOptions, maxTrain int, held []int, rng *rand.Rand) (*mat.Dense, error) {
	x, sup := sd.db, sd.sup
	queries := sup.Queries()
	var val frml.Validator
	if retrieval.IsFRML(lo.Method) {
		if held == nil {
			val = func(l *mat.Dense) float64 { return sd.score(l, nil).MAP }
		} else {
			val = retrieval.HeldOutMAP(x, sup, held)
			queries = slices.DeleteFunc(queries, func(q int) bool { return q < len(held) })
		}
	}
	if n, _ := x.Dims(); maxTrain > 0 && n > maxTrain && !retrieval.IsFRML(lo.Method) && lo.Method != retrieval.MethodEuclidean {
		idx := rng.Perm(n)[:maxTrain]
		slices.Sort(idx)
		_, d := x.Dims()
		sub := mat.NewDense(maxTrain, d, nil)
		for i, j := range idx {
			sub.SetRow(i, x.RawRowView(j))
		}
		var err error
		if sup, err = sup.Subset(idx); err != nil {
			return nil, err
		}
		x, queries = sub, sup.Queries()
	}
	l, _, err := retrieval.FitFactor(ctx, x, sup, queries, lo, val)
	return l, err
}

// scores are query-averaged retrieval measures and kNN errors per k.
type scores struct {
	MAP, AUC, P1, P10 float64
	KNNErr            []float64
}

// score ranks the database for every query under L (labels decide
// relevance) and classifies each query by majority vote of its k nearest
// database items; ties go to the tied class with the nearest member.
func (sd *splitData) score(l *mat.Dense, kGrid []int) scores {
	var ydb, yq mat.Dense
	ydb.Mul(sd.db, l)
	yq.Mul(sd.q, l)
	n, _ := ydb.Dims()
	nq, _ := yq.Dims()
	nClass := 0
	for _, c := range sd.dbLabels {
		nClass = max(nClass, c+1)
	}
	for _, c := range sd.qLabels {
		nClass = max(nClass, c+1)
	}
	var sc scores
	sc.KNNErr = make([]float64, len(kGrid))
	dist := make([]float64, n)
	rel := make([]bool, n)
	votes := make([]int, nClass)
	for qi := 0; qi < nq; qi++ {
		row := yq.RawRowView(qi)
		for i := 0; i < n; i++ {
			dist[i] = retrieval.SqDist(row, ydb.RawRowView(i))
		}
		order := rank.ByDistance(dist, -1)
		for p, i := range order {
			rel[p] = sd.dbLabels[i] == sd.qLabels[qi]
		}
		sc.MAP += rank.AveragePrecision(rel)
		sc.AUC += rank.AUC(rel)
		sc.P1 += rank.PrecisionAt(rel, 1)
		sc.P10 += rank.PrecisionAt(rel, 10)
		for ki, k := range kGrid {
			for c := range votes {
				votes[c] = 0
			}
			for _, i := range order[:min(k, n)] {
				votes[sd.dbLabels[i]]++
			}
			top := slices.Max(votes)
			pred := -1
			for _, i := range order {
				if votes[sd.dbLabels[i]] == top {
					pred = sd.dbLabels[i]
					break
				}
			}
			if pred != sd.qLabels[qi] {
				sc.KNNErr[ki]++
			}
		}
	}
	f := 1 / float64(nq)
	sc.MAP *= f
	sc.AUC *= f
	sc.P1 *= f
	sc.P10 *= f
	for i := range sc.KNNErr {
		sc.KNNErr[i] *= f
	}
	return sc
}

func argminFirst(v []float64) int {
	bi := 0
	for i, x := range v {
		if x < v[bi] {
			bi = i
		}
	}
	return bi
}

// meanSE is the mean and its standard error (sample sd/√n; 0 for n = 1).
func meanSE(v []float64) api.MetricValue {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	if len(v) < 2 {
		return api.MetricValue{Mean: m}
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return api.MetricValue{Mean: m, SE: math.Sqrt(ss/float64(len(v)-1)) / math.Sqrt(float64(len(v)))}
}

// mode is the most frequent value (the smallest among ties).
func mode(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	best, bestN := s[0], 0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i > bestN {
			best, bestN = s[i], j-i
		}
		i = j
	}
	return best
}
