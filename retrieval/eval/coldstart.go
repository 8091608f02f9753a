package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
	"github.com/recsys-engine/recsys/retrieval"
	"github.com/recsys-engine/recsys/retrieval/rank"
)

// ColdStartOptions configure ColdStart.
type ColdStartOptions struct {
	// Methods are the metrics compared (default euclidean, frml, frml-auc).
	Methods []string
	// HoldOut is the share of items made cold per split (default 0.1).
	HoldOut float64
	// Splits with different cold items (default 3).
	Splits int
	Seed   int64
	// Neighbours is |X⁺q|, the collaborative neighbours the metric learns
	// to rank first and the neighbour-recovery target (default 10, as the
	// service's content model).
	Neighbours int
	// History is how many of a user's latest positives seed the cold-start
	// search (default 20, as the service).
	History int
	// Aggregate turns a cold item's distances d_h to the history items into
	// its score: "min" (default: the smallest d_h, what the service's cold
	// slots use) or "sum-exp" (Σ_h exp(−d_h), a kernel vote of the whole
	// history).
	Aggregate string
	// FRML budget (default 10,000 queries, step size re-chosen every 2,500:
	// the service's settings) and the learners' other parameters.
	FRMLIterations, FRMLSegment int
	Params                      retrieval.Params
	Progress                    func(line string)
}

// Aggregates of ColdStartOptions.
const (
	AggregateMin    = "min"
	AggregateSumExp = "sum-exp"
)

// Cold-start report keys.
const (
	KeyNbMAP   = "nb_map"
	KeyNbP10   = "nb_p@10"
	KeyRec10   = "rec@10"
	KeyColdMAP = "cold_map"
)

// ColdStartKeys lists the cold-start report columns in order.
var ColdStartKeys = []string{KeyNbMAP, KeyNbP10, KeyRec10, KeyColdMAP}

// Baselines of the cold-start ranking (rows of the report).
const (
	BaselineRandom       = "random"
	BaselineFeaturePop   = "feature-popularity"
	BaselineOraclePop    = "oracle-popularity"
	coldStartDescription = "items held out per split: all their interactions removed; metric learned on the rest supervised by item-cosine collaborative neighbours"
)

// ColdStart measures content retrieval against collaborative
// similarity and cold-start recommendation (docs/design.md#retrieval, dissertation §3.2
// supervision by a neighbour graph). Per split a seeded HoldOut share of the
// items with features becomes cold: every interaction with them is removed.
// On the remaining (warm) interactions it computes each warm item's
// Neighbours item-cosine neighbours and learns each metric on the warm
// items' features supervised by them (as recsys/content/train.go does). Then:
//
//   - neighbour recovery: each cold item's features query the warm items;
//     relevant are its Neighbours item-cosine neighbours among the warm items
//     computed on all interactions (what collaborative filtering would say
//     had it seen the item); MAP and P@10 of the content ranking;
//   - cold-start recommendation: for every user with a positive on a cold
//     item and a warm history, the cold items are ranked by their smallest
//     distance to the user's History latest warm positives (the service's
//     cold slots); REC@10 (dissertation Eq. 4.2) and MAP of the held-out
//     positives among the cold items.
//
// Baselines rank the cold items without the metric: random (a seeded
// permutation per user), feature-popularity (the mean warm popularity of
// the warm items with the same feature vector, else the overall mean) and
// oracle-popularity (the held-out popularity itself: not available in
// practice, an upper reference for any non-personalised ranking). Distance
// and score ties are broken by a seeded random order, never by id.
func ColdStart(ctx context.Context, in *Interactions, opt ColdStartOptions) (*api.Report, error) {
	if len(opt.Methods) == 0 {
		opt.Methods = []string{retrieval.MethodEuclidean, retrieval.MethodFRML, retrieval.MethodFRMLAUC}
	}
	for _, m := range opt.Methods {
		if err := retrieval.CheckMethod(m); err != nil {
			return nil, err
		}
	}
	if opt.HoldOut <= 0 || opt.HoldOut >= 1 {
		opt.HoldOut = 0.1
	}
	opt.Splits = cmp.Or(opt.Splits, 3)
	opt.Neighbours = cmp.Or(opt.Neighbours, 10)
	opt.History = cmp.Or(opt.History, 20)
	opt.Aggregate = cmp.Or(opt.Aggregate, AggregateMin)
	if opt.Aggregate != AggregateMin && opt.Aggregate != AggregateSumExp {
		return nil, fmt.Errorf("retrieval: unknown aggregate %q (want %s or %s)", opt.Aggregate, AggregateMin, AggregateSumExp)
	}
	opt.FRMLIterations = cmp.Or(opt.FRMLIterations, 10_000)
	opt.FRMLSegment = cmp.Or(opt.FRMLSegment, max(1, opt.FRMLIterations/4))
	if in == nil || len(in.Pairs) == 0 || len(in.Pairs) != len(in.Times) || len(in.Features) != in.Items {
		return nil, errors.New("retrieval: cold-start evaluation needs interactions, times and features per item")
	}
	say := func(format string, args ...any) {
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf(format, args...))
		}
	}
	start := time.Now()
	rows := append(slices.Clone(opt.Methods), BaselineRandom, BaselineFeaturePop, BaselineOraclePop)
	vals := make(map[string]map[string][]float64, len(rows))
	secs := map[string]float64{}
	for _, r := range rows {
		vals[r] = map[string][]float64{}
	}
	for s := 0; s < opt.Splits; s++ {
		sp, err := newColdSplit(ctx, in, &opt, s)
		if err != nil {
			return nil, err
		}
		say("split %d/%d: %d cold items, %d warm items learn from %d neighbour lists, %d test users",
			s+1, opt.Splits, len(sp.cold), len(sp.warm), len(sp.learnRows), len(sp.users))
		for _, method := range opt.Methods {
			t0 := time.Now()
			proj, err := sp.fit(ctx, method, &opt, uint64(opt.Seed)<<16^uint64(s))
			if err != nil {
				return nil, fmt.Errorf("split %d %s: %w", s, method, err)
			}
			secs[method] += time.Since(t0).Seconds() / float64(opt.Splits)
			nbMAP, nbP10 := sp.neighbourRecovery(proj)
			rec, ap := sp.coldStart(func(u int, score []float64) { sp.contentScores(proj, u, opt.Aggregate, score) })
			say("split %d/%d %s: neighbour MAP %.4f P@10 %.4f, cold REC@10 %.4f MAP %.4f (%.1fs)",
				s+1, opt.Splits, method, nbMAP, nbP10, rec, ap, time.Since(t0).Seconds())
			add(vals[method], KeyNbMAP, nbMAP)
			add(vals[method], KeyNbP10, nbP10)
			add(vals[method], KeyRec10, rec)
			add(vals[method], KeyColdMAP, ap)
		}
		rng := rand.New(rand.NewPCG(uint64(opt.Seed), uint64(s)^0xba5e))
		rec, ap := sp.coldStart(func(_ int, score []float64) {
			for k := range score {
				score[k] = rng.Float64()
			}
		})
		add(vals[BaselineRandom], KeyRec10, rec)
		add(vals[BaselineRandom], KeyColdMAP, ap)
		fp := sp.featurePopularity()
		rec, ap = sp.coldStart(func(_ int, score []float64) { copy(score, fp) })
		add(vals[BaselineFeaturePop], KeyRec10, rec)
		add(vals[BaselineFeaturePop], KeyColdMAP, ap)
		rec, ap = sp.coldStart(func(_ int, score []float64) {
			for k, c := range sp.cold {
				score[k] = -float64(sp.testPop[c])
			}
		})
		add(vals[BaselineOraclePop], KeyRec10, rec)
		add(vals[BaselineOraclePop], KeyColdMAP, ap)
	}
	rep := &api.Report{
		Kind: "retrieval-coldstart", Dataset: in.Name, Splits: opt.Splits, Seed: opt.Seed,
		Protocol: fmt.Sprintf("%.0f%% of %s; cold items scored by %s distance to the %d latest positives", 100*opt.HoldOut, coldStartDescription, opt.Aggregate, opt.History),
		Seconds:  time.Since(start).Seconds(),
	}
	for _, r := range rows {
		row := api.ReportRow{Method: r, Params: map[string]float64{}, Metrics: map[string]api.MetricValue{}, TrainSeconds: secs[r]}
		for _, k := range ColdStartKeys {
			if v := vals[r][k]; len(v) > 0 {
				row.Metrics[k] = meanSE(v)
			}
		}
		if retrieval.IsFRML(r) {
			row.Params["iterations"] = float64(opt.FRMLIterations)
		}
		row.Params["neighbours"] = float64(opt.Neighbours)
		row.Params["history"] = float64(opt.History)
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

func add(m map[string][]float64, k string, v float64) { m[k] = append(m[k], v) }

// coldSplit is one split of ColdStart.
type coldSplit struct {
	in         *Interactions
	cold, warm []int // item indices with features
	isCold     []bool
	learnRows  []int   // warm items with collaborative neighbours: the learning set
	learnRel   [][]int // their neighbours as learnRows positions
	truth      [][]int // per cold position: full-data neighbours among warm items (item indices)
	users      []int   // test users
	hist       [][]int // per test user: latest History warm positives with features
	pos        [][]int // per test user: cold positives as cold positions
	trainPop   []int
	testPop    []int
	tie        []float64 // per item, a random tie-breaker
	idx        []int     // item → position in cold (or −1)
}

func newColdSplit(ctx context.Context, in *Interactions, opt *ColdStartOptions, s int) (*coldSplit, error) {
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), uint64(s)))
	var withF []int
	for i, f := range in.Features {
		if f != nil {
			withF = append(withF, i)
		}
	}
	if len(withF) < 20 {
		return nil, errors.New("retrieval: fewer than 20 items have features")
	}
	rng.Shuffle(len(withF), func(a, b int) { withF[a], withF[b] = withF[b], withF[a] })
	nCold := max(1, int(math.Round(opt.HoldOut*float64(len(withF)))))
	sp := &coldSplit{in: in, cold: slices.Clone(withF[:nCold]), warm: slices.Clone(withF[nCold:]),
		isCold: make([]bool, in.Items), trainPop: make([]int, in.Items), testPop: make([]int, in.Items),
		tie: make([]float64, in.Items), idx: make([]int, in.Items)}
	slices.Sort(sp.cold)
	slices.Sort(sp.warm)
	for i := range sp.tie {
		sp.tie[i] = rng.Float64()
		sp.idx[i] = -1
	}
	for k, c := range sp.cold {
		sp.isCold[c] = true
		sp.idx[c] = k
	}
	var train []recsys.Pair
	for _, p := range in.Pairs {
		if sp.isCold[p.Item] {
			sp.testPop[p.Item]++
		} else {
			train = append(train, p)
			sp.trainPop[p.Item]++
		}
	}
	xTrain, err := recsys.NewMatrix(in.Users, in.Items, train)
	if err != nil {
		return nil, err
	}
	nbTrain, err := recsys.ItemCosineKNN(ctx, xTrain, opt.Neighbours, nil)
	if err != nil {
		return nil, err
	}
	// The learning set, built as recsys/content/train.go learnContent does.
	row := map[int]int{}
	for _, i := range sp.warm {
		if len(nbTrain.Row(i)) > 0 {
			row[i] = len(sp.learnRows)
			sp.learnRows = append(sp.learnRows, i)
		}
	}
	sp.learnRel = make([][]int, len(sp.learnRows))
	for r, i := range sp.learnRows {
		for _, n := range nbTrain.Row(i) {
			if q, ok := row[int(n.Index)]; ok {
				sp.learnRel[r] = append(sp.learnRel[r], q)
			}
		}
	}
	// Ground truth for neighbour recovery: neighbours on all interactions.
	xFull, err := recsys.NewMatrix(in.Users, in.Items, in.Pairs)
	if err != nil {
		return nil, err
	}
	nbFull, err := recsys.ItemCosineKNN(ctx, xFull, opt.Neighbours+nCold, nil)
	if err != nil {
		return nil, err
	}
	sp.truth = make([][]int, len(sp.cold))
	for k, c := range sp.cold {
		for _, n := range nbFull.Row(c) {
			j := int(n.Index)
			if !sp.isCold[j] && in.Features[j] != nil && len(sp.truth[k]) < opt.Neighbours {
				sp.truth[k] = append(sp.truth[k], j)
			}
		}
	}
	// Test users: a positive on a cold item and a warm history with features.
	type ev struct {
		item int
		t    int64
		k    int
	}
	hist := make([][]ev, in.Users)
	pos := make([][]int, in.Users)
	for k, p := range in.Pairs {
		i := int(p.Item)
		switch {
		case sp.isCold[i]:
			pos[p.User] = append(pos[p.User], sp.idx[i])
		case in.Features[i] != nil:
			hist[p.User] = append(hist[p.User], ev{i, in.Times[k], k})
		}
	}
	for u := 0; u < in.Users; u++ {
		if len(pos[u]) == 0 || len(hist[u]) == 0 {
			continue
		}
		h := hist[u]
		slices.SortFunc(h, func(a, b ev) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.k, b.k)) })
		h = h[max(0, len(h)-opt.History):]
		items := make([]int, len(h))
		for k, e := range h {
			items[k] = e.item
		}
		sp.users = append(sp.users, u)
		sp.hist = append(sp.hist, items)
		sp.pos = append(sp.pos, pos[u])
	}
	if len(sp.learnRows) < 20 || len(sp.users) == 0 {
		return nil, fmt.Errorf("retrieval: split %d: %d items to learn from and %d test users; too few", s, len(sp.learnRows), len(sp.users))
	}
	return sp, nil
}

// fit learns method on the learning set and projects every item with
// features (nil rows for the others).
func (sp *coldSplit) fit(ctx context.Context, method string, opt *ColdStartOptions, seed uint64) ([][]float64, error) {
	X := make([][]float64, len(sp.learnRows))
	for r, i := range sp.learnRows {
		X[r] = sp.in.Features[i]
	}
	sup, err := retrieval.FromNeighbours(sp.learnRel)
	if err != nil {
		return nil, err
	}
	met, err := retrieval.Learn(ctx, X, sup, retrieval.LearnOptions{Method: method, Params: opt.Params,
		Iterations: opt.FRMLIterations, Segment: opt.FRMLSegment, Seed: seed})
	if err != nil {
		return nil, err
	}
	proj := make([][]float64, sp.in.Items)
	for i, f := range sp.in.Features {
		if f != nil {
			if proj[i], err = met.Project(f); err != nil {
				return nil, err
			}
		}
	}
	return proj, nil
}

// neighbourRecovery ranks the warm items for every cold item and scores the
// ranking against its collaborative neighbours.
func (sp *coldSplit) neighbourRecovery(proj [][]float64) (mapV, p10 float64) {
	dist := make([]float64, len(sp.warm))
	order := make([]int, len(sp.warm))
	rel := make([]bool, len(sp.warm))
	n := 0
	for k, c := range sp.cold {
		if len(sp.truth[k]) == 0 {
			continue
		}
		for w, j := range sp.warm {
			dist[w] = retrieval.SqDist(proj[c], proj[j])
			order[w] = w
		}
		sort.Slice(order, func(a, b int) bool {
			da, db := dist[order[a]], dist[order[b]]
			if da != db {
				return da < db
			}
			return sp.tie[sp.warm[order[a]]] < sp.tie[sp.warm[order[b]]]
		})
		for p, w := range order {
			rel[p] = slices.Contains(sp.truth[k], sp.warm[w])
		}
		mapV += rank.AveragePrecision(rel)
		p10 += rank.PrecisionAt(rel, 10)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return mapV / float64(n), p10 / float64(n)
}

// contentScores: a cold item's score (lower is better) is its smallest
// distance to the user's history, as the service's cold slots, or with
// AggregateSumExp −Σ_h exp(−d_h).
func (sp *coldSplit) contentScores(proj [][]float64, ui int, agg string, score []float64) {
	for k, c := range sp.cold {
		best, sum := math.Inf(1), 0.0
		for _, h := range sp.hist[ui] {
			d := retrieval.SqDist(proj[c], proj[h])
			best = min(best, d)
			sum += math.Exp(-d)
		}
		if agg == AggregateSumExp {
			score[k] = -sum
		} else {
			score[k] = best
		}
	}
}

// featurePopularity scores cold items by minus the mean warm popularity of
// warm items with the same feature vector (the overall warm mean if none).
func (sp *coldSplit) featurePopularity() []float64 {
	key := func(f []float64) string { return fmt.Sprint(f) }
	sum, cnt := map[string]float64{}, map[string]int{}
	all := 0.0
	for _, j := range sp.warm {
		k := key(sp.in.Features[j])
		sum[k] += float64(sp.trainPop[j])
		cnt[k]++
		all += float64(sp.trainPop[j])
	}
	all /= float64(len(sp.warm))
	out := make([]float64, len(sp.cold))
	for k, c := range sp.cold {
		if n := cnt[key(sp.in.Features[c])]; n > 0 {
			out[k] = -sum[key(sp.in.Features[c])] / float64(n)
		} else {
			out[k] = -all
		}
	}
	return out
}

// coldStart ranks the cold items per test user by scoreFn (ascending, ties
// by the split's random order) and averages REC@10 and MAP of the user's
// held-out positives.
func (sp *coldSplit) coldStart(scoreFn func(user int, score []float64)) (rec10, mapV float64) {
	score := make([]float64, len(sp.cold))
	order := make([]int, len(sp.cold))
	rankOf := make([]int, len(sp.cold))
	for ui := range sp.users {
		scoreFn(ui, score)
		for k := range order {
			order[k] = k
		}
		sort.Slice(order, func(a, b int) bool {
			if score[order[a]] != score[order[b]] {
				return score[order[a]] < score[order[b]]
			}
			return sp.tie[sp.cold[order[a]]] < sp.tie[sp.cold[order[b]]]
		})
		for r, k := range order {
			rankOf[k] = r
		}
		ranks := make([]int, len(sp.pos[ui]))
		for p, k := range sp.pos[ui] {
			ranks[p] = rankOf[k]
		}
		slices.Sort(ranks)
		rec10 += metrics.RecallAt(ranks, 10)
		mapV += metrics.AP(ranks)
	}
	f := 1 / float64(len(sp.users))
	return rec10 * f, mapV * f
}
