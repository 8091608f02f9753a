package content

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/retrieval"
)

// contentNeighbours is |X⁺q|: how many collaborative neighbours of an item
// the content metric learns to rank first (dissertation §3.2).
const contentNeighbours = 10

// minContentItems is the fewest items with both features and
// collaborative neighbours that the content metric learns from.
const minContentItems = 20

// learnContent learns a content metric supervised by the collaborative
// neighbours of the items that have both features and interactions, so
// that items with features but no interactions get similar items too, and
// the cold rule that goes with it (coldRule). With fewer than
// minContentItems such items it learns nothing and returns their count.
func learnContent(ctx context.Context, d recsys.TrainData) (*Content, coldValidation, int, error) {
	x, seed := d.X, d.Seed
	if len(d.FeatureNames) == 0 {
		return nil, coldValidation{}, 0, nil
	}
	nb, err := recsys.ItemCosineKNN(ctx, x, contentNeighbours, nil)
	if err != nil {
		return nil, coldValidation{}, 0, err
	}
	rows := contentRows(d, x, nb)
	if len(rows) < minContentItems {
		return nil, coldValidation{}, len(rows), nil // too little supervision to learn from
	}
	m, err := fitContent(ctx, d, nb, rows, seed)
	if err != nil {
		return nil, coldValidation{}, 0, err
	}
	rule, val, err := coldRule(ctx, d, x, nb, rows, m, seed)
	if err != nil {
		return nil, coldValidation{}, 0, err
	}
	c, err := NewContent(d.FeatureNames, m).WithColdRule(rule)
	return c, val, len(rows), err
}

// contentRows are the dense item indices with features and collaborative
// neighbours: the items the metric learns from.
func contentRows(d recsys.TrainData, x *recsys.Matrix, nb *recsys.Neighbours) []int {
	var rows []int
	for i := 0; i < x.Items() && i < len(d.Features); i++ {
		if d.Features[i] != nil && nb.Rows() > i && len(nb.Row(i)) > 0 {
			rows = append(rows, i)
		}
	}
	return rows
}

// fitContent learns the metric on the items rows, each supervised by its
// collaborative neighbours among rows.
func fitContent(ctx context.Context, d recsys.TrainData, nb *recsys.Neighbours, rows []int, seed uint64) (*retrieval.Metric, error) {
	row := make(map[int]int, len(rows))
	for r, i := range rows {
		row[i] = r
	}
	X := make([][]float64, len(rows))
	rel := make([][]int, len(rows))
	for r, i := range rows {
		X[r] = d.Features[i]
		for _, n := range nb.Row(i) {
			if q, ok := row[int(n.Index)]; ok {
				rel[r] = append(rel[r], q)
			}
		}
	}
	sup, err := retrieval.FromNeighbours(rel)
	if err != nil {
		return nil, err
	}
	return retrieval.Learn(ctx, X, sup, retrieval.LearnOptions{Method: retrieval.MethodFRML,
		Iterations: 10000, Segment: 2500, Seed: seed})
}

// Cold-rule validation (docs/design.md#cold-start): a seeded coldHeldOut
// share of the learning items, at most coldMaxHeldOut, is held out as if
// cold, for at most coldMaxUsers users, on a grid of coldGrid quantiles.
// With fewer than coldMinConsumed held-out consumptions a grid step holds
// about two or fewer, too few to choose on, and no threshold is set.
const (
	coldHeldOut     = 0.1
	coldMaxHeldOut  = 500
	coldMaxUsers    = 2000
	coldGrid        = 20
	coldMinConsumed = 50
)

// coldValidation describes the validation that chose the cold threshold.
type coldValidation struct {
	heldOut, pairs, consumed int
	excess                   float64 // per consumed pair, at the threshold
}

// coldRule returns the cold rule of metric m, learned on rows: each
// feature's support among rows, and the distance threshold chosen on
// validation. A seeded share of rows is held out as if cold (their events
// kept out of the metric's supervision), the metric is learned again on
// the rest, and every sampled user's distance to each held-out item with
// evidence is measured as the cold slots measure it: the smallest squared
// distance to the user's 20 positives of highest dense index among those
// left in.
// retrieval.ColdThreshold chooses the threshold on those pairs; it carries
// over to m as the same multiple of the metric's spread over rows.
func coldRule(ctx context.Context, d recsys.TrainData, x *recsys.Matrix, nb *recsys.Neighbours, rows []int, m *retrieval.Metric, seed uint64) (ColdRule, coldValidation, error) {
	rule := ColdRule{Support: make([]uint32, len(d.FeatureNames)), MaxDistance: math.Inf(1)}
	for _, i := range rows {
		for k, v := range d.Features[i] {
			if v != 0 {
				rule.Support[k]++
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0xc01d))
	perm := slices.Clone(rows)
	rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
	nHeld := min(max(1, int(coldHeldOut*float64(len(rows))+0.5)), coldMaxHeldOut)
	if len(rows)-nHeld < minContentItems {
		return rule, coldValidation{}, nil
	}
	held, kept := perm[:nHeld], slices.Sorted(slices.Values(perm[nHeld:]))
	isHeld := make(map[int]bool, len(held))
	for _, i := range held {
		isHeld[i] = true
	}
	mv, err := fitContent(ctx, d, nb, kept, seed)
	if err != nil {
		return rule, coldValidation{}, err
	}
	var users []int
	for u := 0; u < x.Users(); u++ {
		if x.UserCount(u) > 0 {
			users = append(users, u)
		}
	}
	if len(users) > coldMaxUsers {
		rng.Shuffle(len(users), func(a, b int) { users[a], users[b] = users[b], users[a] })
		users = users[:coldMaxUsers]
	}
	proj := map[int][]float64{} // by dense item index, under mv
	project := func(i int) ([]float64, error) {
		if p, ok := proj[i]; ok || d.Features[i] == nil {
			return p, nil
		}
		p, err := mv.Project(d.Features[i])
		proj[i] = p
		return p, err
	}
	// A held-out item is offered as the cold slots would offer it: only
	// with evidence, and with its features that are no evidence set to 0.
	coldVec := map[int][]float64{}
	for _, c := range held {
		f := slices.Clone(d.Features[c])
		evidence := false
		for k, v := range f {
			switch {
			case rule.Support[k] < MinColdSupport:
				f[k] = 0
			case v != 0:
				evidence = true
			}
		}
		if evidence {
			if coldVec[c], err = mv.Project(f); err != nil {
				return rule, coldValidation{}, err
			}
		}
	}
	val := coldValidation{heldOut: nHeld}
	var pairs []retrieval.ColdPair
	var hist [][]float64
	for _, u := range users {
		if err := ctx.Err(); err != nil {
			return rule, coldValidation{}, err
		}
		hist = hist[:0]
		consumed := map[int]bool{}
		row := x.Row(u)
		recent := 0 // as serving's recentHistory: 20 positives, with features or not
		for k := len(row) - 1; k >= 0; k-- {
			i := int(row[k])
			if isHeld[i] {
				consumed[i] = true
				continue
			}
			if recent++; recent > 20 || i >= len(d.Features) {
				continue
			}
			p, err := project(i)
			if err != nil {
				return rule, coldValidation{}, err
			}
			if p != nil {
				hist = append(hist, p)
			}
		}
		if len(hist) == 0 {
			continue
		}
		for _, c := range held {
			p, ok := coldVec[c]
			if !ok {
				continue
			}
			d := math.Inf(1)
			for _, h := range hist {
				d = min(d, retrieval.SqDist(p, h))
			}
			pairs = append(pairs, retrieval.ColdPair{User: u, Item: c, Distance: d, Consumed: consumed[c]})
			if consumed[c] {
				val.consumed++
			}
		}
	}
	val.pairs = len(pairs)
	if val.consumed < coldMinConsumed {
		return rule, val, nil
	}
	t, excess := retrieval.ColdThreshold(pairs, coldGrid)
	val.excess = excess
	if math.IsInf(t, 1) {
		return rule, val, nil
	}
	var onVal, onM [][]float64
	for _, i := range rows {
		p, err := project(i)
		if err != nil {
			return rule, coldValidation{}, err
		}
		q, err := m.Project(d.Features[i])
		if err != nil {
			return rule, coldValidation{}, err
		}
		onVal, onM = append(onVal, p), append(onM, q)
	}
	rule.MaxDistance = t
	if s := retrieval.Spread(onVal); s > 0 {
		rule.MaxDistance = t / s * retrieval.Spread(onM)
	}
	return rule, val, nil
}

// train learns the content metric when items have features; when there
// is too little to learn from, it returns no model and says why.
func train(ctx context.Context, d recsys.TrainData) (_ *recsys.Trained, skipped string, _ error) {
	const kept = "; the content model served before, if any, stays"
	switch {
	case len(d.FeatureNames) == 0:
		return nil, "no item has features (PUT /items with \"features\")" + kept, nil
	case d.X.NNZ() == 0:
		return nil, "there are no relevant interactions to learn from" + kept, nil
	}
	if d.Enter != nil {
		d.Enter("content metric")
	}
	model, _, n, err := learnContent(ctx, d)
	if err != nil {
		return nil, "", err
	}
	if model == nil {
		return nil, fmt.Sprintf("only %d items have both features and collaborative neighbours; learning the metric needs at least %d", n, minContentItems) + kept, nil
	}
	if model, err = BuildGraph(ctx, model, d.Features, d.ContentApproxAbove, d.Enter); err != nil {
		return nil, "", err
	}
	m := model.Metric()
	// The cold rule in short keys, the threshold to four digits: the
	// dashboard lists every parameter in one table cell.
	params := map[string]float64{"rank": float64(m.Rank()), "features": float64(m.Dim()), "neighbours": contentNeighbours,
		"cold_support": MinColdSupport}
	if d := model.Cold().MaxDistance; !math.IsInf(d, 1) {
		params["cold_dist"], _ = strconv.ParseFloat(strconv.FormatFloat(d, 'g', 4, 64), 64)
	}
	return &recsys.Trained{Model: model, Items: n, Params: params}, "", nil
}

// BuildGraph returns c with the HNSW graph of the featured items when
// they are more than above (0 = retrieval.DefaultApproxAbove, negative =
// never), built as serving would build it at load (recsys/serving: the
// items with features, by increasing dense index, projected by the
// metric; HNSW seed 1) on every core; otherwise c as it is. features
// holds each item's values in the order of c's feature names, nil for an
// item without features. enter, when not nil, is called with the stage's
// name ("content graph") when the build starts.
func BuildGraph(ctx context.Context, c *Content, features [][]float64, above int, enter func(stage string)) (*Content, error) {
	var items []uint32
	var vecs [][]float64
	for i, f := range features {
		if f != nil {
			items = append(items, uint32(i))
			vecs = append(vecs, f)
		}
	}
	if above < 0 || len(items) <= cmp.Or(above, retrieval.DefaultApproxAbove) {
		return c, nil
	}
	if enter != nil {
		enter("content graph")
	}
	s, err := retrieval.NewSearcher(c.Metric(), vecs)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := retrieval.BuildHNSW(s.Index, retrieval.HNSWOptions{Seed: 1, Workers: runtime.GOMAXPROCS(0)})
	if err != nil {
		return nil, err
	}
	return c.WithGraph(Graph{Items: items, Fingerprint: s.Index.Fingerprint(), HNSW: h.Graph()})
}
