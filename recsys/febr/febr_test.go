package febr

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/internal/brute"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// holdOut moves a uniform share of every user's items of x to a
// validation list, returning the rest as a matrix.
func holdOut(tb testing.TB, x *recsys.Matrix, share float64, seed uint64) (*recsys.Matrix, [][]uint32) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	val := make([][]uint32, x.Users())
	var rest []recsys.Pair
	for u := range x.Users() {
		row := slices.Clone(x.Row(u))
		rng.Shuffle(len(row), func(a, b int) { row[a], row[b] = row[b], row[a] })
		h := 0
		if len(row) >= 3 {
			h = max(1, int(share*float64(len(row))))
		}
		val[u] = slices.Sorted(slices.Values(row[:h]))
		for _, i := range row[h:] {
			rest = append(rest, recsys.Pair{User: uint32(u), Item: i})
		}
	}
	train, err := recsys.NewMatrix(x.Users(), x.Items(), rest)
	if err != nil {
		tb.Fatal(err)
	}
	return train, val
}

// The sparse validation ADG of OPT-ADG's early stopping equals the ADG of
// the model's dense scores ranked as the offline evaluation ranks them,
// ties and the missing block included.
func TestFEBR_validationADG_matchesDenseRanking(t *testing.T) {
	x := generated(t, 9, 120, 90, 10)
	train, val := holdOut(t, x, 0.25, 1)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 4))
	for _, name := range []string{"febr-i-cosine", "febr-u-kunn", "febr-iu-cosine", "febr-i-slim"} {
		v, _ := variantOf(name)
		p := recsys.Params{K: 4}.WithDefaults()
		for _, budget := range []int64{1 << 30, -1} {
			data, err := prepare(ctx, train, v, p, Options{MemoryBudget: budget}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			thetas := [][]float64{data.full.ext.initialTheta(), make([]float64, data.full.ext.dim)}
			for range 3 {
				th := make([]float64, data.full.ext.dim)
				for f := range th {
					th[f] = rng.NormFloat64()
				}
				thetas = append(thetas, th)
			}
			for _, th := range thetas {
				got, err := data.full.validationADG(ctx, th, val)
				if err != nil {
					t.Fatal(err)
				}
				m := &Model{v: v}
				m.set(data.full.ext, train, p.K, 0, 0, 0, th)
				want, err := modelValidationADG(ctx, m, train, val)
				if err != nil {
					t.Fatal(err)
				}
				if !closeTo(got, want, 1e-12) {
					t.Fatalf("%s budget %d θ %v: validation ADG %v, dense ranking gives %v", name, budget, th, got, want)
				}
			}
		}
	}
}

// TestFEBR_validationMemo_bounded checks the memo of validation blocks of
// a streaming training set: the first pass fills it within its bound, with
// the blocks of some users and not the others, and ranks every user; the
// later passes rank the kept users alone, as a pass over their validation
// items alone extracting every block again does, for any θ.
func TestFEBR_validationMemo_bounded(t *testing.T) {
	x := generated(t, 9, 120, 90, 10)
	train, val := holdOut(t, x, 0.25, 1)
	ctx := context.Background()
	v, _ := variantOf("febr-iu-cosine")
	p := recsys.Params{K: 4}.WithDefaults()
	fresh := func() *trainSet {
		data, err := prepare(ctx, train, v, p, Options{MemoryBudget: -1}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return data.full
	}
	// The bytes of every validation user's block, for the bound.
	whole := fresh()
	theta := whole.ext.initialTheta()
	if _, _, err := whole.validationPass(ctx, theta, val, true, false, nil); err != nil {
		t.Fatal(err)
	}
	if !whole.valMemoAll(val) {
		t.Fatal("an unbounded memo keeps every validation user")
	}
	old := validationMemo
	t.Cleanup(func() { validationMemo = old })
	validationMemo = whole.valBytes / 2
	ts := fresh()
	all, kept, err := ts.validationPass(ctx, theta, val, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := fresh().validationADG(ctx, theta, val); all != want {
		t.Fatalf("filling pass: validation ADG %v, %v extracting every block", all, want)
	}
	keptVal := make([][]uint32, len(val))
	n, users := 0, 0
	for u := range val {
		if len(val[u]) > 0 {
			users++
			if ts.valMemo[u] != nil {
				keptVal[u] = val[u]
				n++
			}
		}
	}
	if ts.valBytes > validationMemo || n == 0 || n == users {
		t.Fatalf("memo holds %d bytes (bound %d) for %d of %d users; want within the bound, some users but not all", ts.valBytes, validationMemo, n, users)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for pass := range 4 {
		th := theta
		if pass > 0 {
			th = make([]float64, ts.ext.dim)
			for f := range th {
				th[f] = rng.NormFloat64()
			}
		}
		want, err := fresh().validationADG(ctx, th, keptVal)
		if err != nil {
			t.Fatal(err)
		}
		if pass == 0 && kept != want {
			t.Fatalf("filling pass: kept users' ADG %v, %v over their items alone", kept, want)
		}
		a, k, err := ts.validationPass(ctx, th, val, false, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if a != want || k != want {
			t.Fatalf("pass %d over the memo: ADG %v / %v, %v over the kept users' items alone", pass, a, k, want)
		}
	}
}

// trainingADG is the mean over the users OPT-ADG samples of the ADG of
// their positives, each ranked among the user's negatives only (the
// quantity Eq. 4.10 bounds), by brute force over dense scores.
func trainingADG(ts *trainSet, theta []float64) float64 {
	n := ts.x.Items()
	scores := make([]float64, n)
	isPos := make([]bool, n)
	sMiss := dot(theta, ts.zMiss)
	prank := ts.ranker.Positions()
	var b block
	total := 0.0
	for _, u32 := range ts.eligible {
		u := int(u32)
		ts.ext.block(u, ts.x.Row(u), &b)
		for i := range scores {
			scores[i] = sMiss
		}
		for q, i := range b.items {
			scores[i] = dot(theta, b.row(q, ts.ext.dim))
		}
		clear(isPos)
		for _, i := range ts.x.Row(u) {
			isPos[i] = true
		}
		pos := ts.positives(u)
		for _, i := range pos {
			isPos[i] = true
		}
		adg := 0.0
		for _, p := range pos {
			rank := 0
			for j := range n {
				if !isPos[j] && (scores[j] > scores[p] || (scores[j] == scores[p] && prank[j] < prank[p])) {
					rank++
				}
			}
			adg += lossGain(rank)
		}
		total += adg / float64(len(pos))
	}
	return total / float64(len(ts.eligible))
}

func lossGain(rank int) float64 { return 1 - lossC(rank) }

// toyFigure42 is a toy feedback matrix in the manner of dissertation
// Figure 4.2 (whose entries the text does not preserve): rows u1…u5,
// columns i1…i6, and the pair of interest (u2, i2), which u2 has not
// consumed.
//
//	     i1 i2 i3 i4 i5 i6
//	u1 [  0  1  0  1  1  1 ]
//	u2 [  0  0  1  1  1  1 ]
//	u3 [  0  0  0  1  1  0 ]
//	u4 [  0  1  0  0  0  1 ]
//	u5 [  1  1  1  0  0  0 ]
func toyFigure42(t *testing.T) *recsys.Matrix {
	t.Helper()
	rows := [][]uint32{{1, 3, 4, 5}, {2, 3, 4, 5}, {3, 4}, {1, 5}, {0, 1, 2}}
	var pairs []recsys.Pair
	for u, r := range rows {
		for _, i := range r {
			pairs = append(pairs, recsys.Pair{User: uint32(u), Item: i})
		}
	}
	x, err := recsys.NewMatrix(5, 6, pairs)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// rawFeatures returns the raw feature vectors the extractor visits for a
// training user, by item.
func rawFeatures(e *extractor, x *recsys.Matrix, u int) map[uint32][]float64 {
	out := map[uint32][]float64{}
	e.extract(u, x.Row(u), func(i uint32, raw []float64) { out[i] = slices.Clone(raw) })
	return out
}

// The features of (u2, i2) in the toy matrix with k = 3 and cosine
// affinities, worked out by hand.
//
// Item side. O⁺i2 = {u1, u4, u5}, c(i2) = 3. Cosines with i2:
// i1 = {u5}: 1/√(3·1) = 1/√3 ≈ 0.577; i3 = {u2, u5}: 1/√6 ≈ 0.408;
// i4 = i5 = {u1, u2, u3}: 1/3; i6 = {u1, u2, u4}: 2/3. So KNN(i2) =
// {i6, i1, i3} (1/√6 > 1/3: no tie at the boundary). O⁺u2 = {i3, i4,
// i5, i6}, hence ActiveItems(u2, i2) = {i6, i3} and i1 is the neighbour u2
// has not consumed: φ_item = (2/3, 1/√6), giving
//
//	mean = (2/3 + 1/√6)/2, std = (2/3 − 1/√6)/2 (population),
//	min = 1/√6, max = 2/3, len = 2/3, sum = 2/3 + 1/√6, missing = 0.
//
// User side. c(u2) = 4. Cosines with u2: u1 = {i2, i4, i5, i6}: 3/√16 =
// 3/4; u3 = {i4, i5}: 2/√8 = 1/√2; u4 = {i2, i6}: 1/√8; u5 = {i1, i2,
// i3}: 1/√12. So KNN(u2) = {u1, u3, u4}; of these u1 and u4 consumed i2
// (u3 did not): φ_user = (3/4, 1/√8), giving
//
//	mean = (3/4 + 1/√8)/2, std = (3/4 − 1/√8)/2, min = 1/√8, max = 3/4,
//	len = 2/3, sum = 3/4 + 1/√8, missing = 0.
func TestFEBR_features_figure42(t *testing.T) {
	x := toyFigure42(t)
	ctx := context.Background()
	v, _ := variantOf("febr-iu-cosine")
	e, err := extractorFor(ctx, x, v, recsys.Params{K: 3}.WithDefaults(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s6, s8 := 1/math.Sqrt(6), 1/math.Sqrt(8)
	want := []float64{
		(2.0/3 + s6) / 2, (2.0/3 - s6) / 2, s6, 2.0 / 3, 2.0 / 3, 2.0/3 + s6, 0,
		(0.75 + s8) / 2, (0.75 - s8) / 2, s8, 0.75, 2.0 / 3, 0.75 + s8, 0,
	}
	got, ok := rawFeatures(e, x, 1)[1]
	if !ok {
		t.Fatal("(u2, i2) has no features")
	}
	for f := range want {
		if !closeTo(got[f], want[f], 1e-12) {
			t.Errorf("feature %d: got %.15g, want %.15g", f, got[f], want[f])
		}
	}

	// §4.5.4: u3 = {i4, i5} has no active item for i1 (KNN(i1) = {i3,
	// i2}) and no active user (KNN(u3) = {u1, u2}, neither consumed i1):
	// i1 is not a candidate and gets the missing vector's score.
	if _, ok := rawFeatures(e, x, 2)[0]; ok {
		t.Fatal("(u3, i1) has features, want missing")
	}
	m := &Model{v: v}
	mean, std := make([]float64, e.dim), make([]float64, e.dim)
	for f := range std {
		mean[f], std[f] = 0.1*float64(f), 1+float64(f)
	}
	e.setStats(mean, std)
	theta := make([]float64, e.dim)
	for f := range theta {
		theta[f] = float64(f%5) - 1.5
	}
	m.set(e, x, 3, 0, 0, 0, theta)
	scores := make([]float64, 6)
	m.ScoreUser(2, x.Row(2), scores)
	miss := e.missingRaw()
	z := make([]float64, e.dim)
	e.zscore(miss, z)
	if want := dot(theta, z); scores[0] != want {
		t.Fatalf("score of a missing pair %v, want θ·z(missing) = %v", scores[0], want)
	}
}

// Theorem 4.3 and Corollary 4.1: aggsum of the item features is
// [ktrunc(A_item)]_i,* · u and aggsum of the user features is
// [ktrunc(A_user)]_u,* · i, computed here from dense similarity matrices.
func TestFEBR_aggsum_theorem43(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		seed uint64
		k    int
		aff  string
	}{{1, 3, recsys.SimCosine}, {2, 7, recsys.SimCosine}, {3, 4, recsys.SimKUNN}, {4, 50, recsys.SimKUNN}, {5, 1, recsys.SimCosine}} {
		x, d := randomMatrix(t, tc.seed, 30, 25, 0.2)
		v, _ := variantOf("febr-iu-" + tc.aff)
		e, err := extractorFor(ctx, x, v, recsys.Params{K: tc.k}.WithDefaults(), nil)
		if err != nil {
			t.Fatal(err)
		}
		m, n := len(d), len(d[0])
		c := brute.ColCounts(d)
		// [ktrunc(A_item)]_i,* by brute force, once per item.
		knnOf := make([][]recsys.Neighbour, n)
		for i := range n {
			sim := make([]float64, n)
			for j := range sim {
				switch {
				case tc.aff == recsys.SimKUNN:
					sim[j] = brute.KUNNItemSim(d, i, j)
				case c[i] > 0 && c[j] > 0:
					co := 0
					for w := range d {
						if d[w][i] && d[w][j] {
							co++
						}
					}
					sim[j] = float64(co) / math.Sqrt(float64(c[i])*float64(c[j]))
				}
			}
			knnOf[i] = bruteKNN(sim, i, tc.k)
		}
		for u := range m {
			feats := rawFeatures(e, x, u)
			// [ktrunc(A_user)]_u,* over U \ u, by brute force (models_test.go).
			userSum := brute.UserP(d, d[u], u, tc.k, tc.aff == recsys.SimKUNN)
			for i := range n {
				itemSum := 0.0
				for _, nb := range knnOf[i] {
					if d[u][nb.Index] {
						itemSum += nb.Value
					}
				}
				f, ok := feats[uint32(i)]
				if !ok {
					if itemSum != 0 || userSum[i] != 0 {
						t.Fatalf("seed %d: (%d, %d) missing but the sums are %g, %g", tc.seed, u, i, itemSum, userSum[i])
					}
					continue
				}
				if !closeTo(f[aggSum], itemSum, 1e-12) || !closeTo(f[featuresPerSide+aggSum], userSum[i], 1e-12) {
					t.Fatalf("seed %d k %d: aggsum(%d, %d) = %g, %g; ktrunc(A)·x gives %g, %g", tc.seed, tc.k, u, i,
						f[aggSum], f[featuresPerSide+aggSum], itemSum, userSum[i])
				}
				// agglen is |ActiveItems|/k and agrees with the other
				// aggregates.
				if f[aggLen] > 0 && !closeTo(f[aggMean]*f[aggLen]*float64(tc.k), f[aggSum], 1e-12) {
					t.Fatalf("aggsum ≠ aggmean·k·agglen at (%d, %d)", u, i)
				}
			}
		}
	}
}

// §4.5.5: the linear predictor on the raw FEBRiu-KUNN features with
// θ = 1/√c(u) on the item aggsum and 1/√c(i) on the user aggsum, zero
// elsewhere, is KUNN (Eq. 4.4). The dissertation prints the two weights
// the other way round; Eq. (4.4) and Theorem 4.4 fix them as here. With
// θ = 1 on aggsum, FEBRi is item-p (cosine) and SLIM, FEBRu is user-p.
func TestFEBR_linearPredictor_reproducesKUNNAndItemP(t *testing.T) {
	ctx := context.Background()
	x, _ := randomMatrix(t, 31, 40, 30, 0.15)
	p := recsys.Params{K: 5, L1: 0.5, L2: 1}.WithDefaults()
	cases := []struct {
		variant, model string
		score          func(f []float64, cu, ci int) float64
	}{
		{"febr-iu-kunn", "kunn", func(f []float64, cu, ci int) float64 {
			s := f[aggSum] / math.Sqrt(float64(cu))
			if ci > 0 {
				s += f[featuresPerSide+aggSum] / math.Sqrt(float64(ci))
			}
			return s
		}},
		{"febr-i-cosine", "itemknn", func(f []float64, _, _ int) float64 { return f[aggSum] }},
		{"febr-i-kunn", "kunn-i", func(f []float64, _, _ int) float64 { return f[aggSum] }},
		{"febr-u-cosine", "userknn", func(f []float64, _, _ int) float64 { return f[aggSum] }},
		{"febr-i-slim", "slim", func(f []float64, _, _ int) float64 { return f[aggSum] }},
	}
	for _, tc := range cases {
		v, _ := variantOf(tc.variant)
		base := fitted(t, tc.model, x, p)
		var slimW *recsys.Neighbours
		if s, ok := base.(*recsys.ItemP); ok && tc.model == "slim" {
			slimW = s.Affinities()
		}
		e, err := extractorFor(ctx, x, v, p, slimW)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, x.Items())
		for u := range x.Users() {
			recsys.ScoreUser(base, u, x.Row(u), want)
			feats := rawFeatures(e, x, u)
			for i := range want {
				got := 0.0
				if f, ok := feats[uint32(i)]; ok {
					got = tc.score(f, x.UserCount(u), x.ItemCount(i))
				}
				if !closeTo(got, want[i], 1e-12) {
					t.Fatalf("%s: θ·φ(%d, %d) = %g, %s scores %g", tc.variant, u, i, got, tc.model, want[i])
				}
			}
		}
	}
}

// A FEBR model whose θ is the initial aggsum predictor ranks every item as
// item-p, user-p and SLIM do (z-scoring keeps the order, missing pairs
// come last by popularity): OPT-ADG starts from the baseline.
func TestFEBR_initialTheta_ranksAsBaseline(t *testing.T) {
	x := generated(t, 12, 150, 120, 12)
	pop := x.Popularity()
	ctx := context.Background()
	p := recsys.Params{K: 8, L1: 0.5, L2: 1}.WithDefaults()
	for variant, model := range map[string]string{"febr-i-cosine": "itemknn", "febr-u-kunn": "kunn-u", "febr-i-slim": "slim"} {
		v, _ := variantOf(variant)
		base := fitted(t, model, x, p)
		var slimW *recsys.Neighbours
		if model == "slim" {
			slimW = base.(*recsys.ItemP).Affinities()
		}
		data, err := prepare(ctx, x, v, p, Options{MemoryBudget: -1}, slimW, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := &Model{v: v}
		m.set(data.full.ext, x, p.K, 0, 0, 0, data.full.ext.initialTheta())
		a, b := make([]float64, x.Items()), make([]float64, x.Items())
		for u := range x.Users() {
			recsys.ScoreUser(base, u, x.Row(u), a)
			recsys.ScoreUser(m, u, x.Row(u), b)
			if got, want := recsys.TopN(b, pop, x.Row(u), x.Items()), recsys.TopN(a, pop, x.Row(u), x.Items()); !slices.Equal(got, want) {
				t.Fatalf("%s: user %d ranks %v, %s ranks %v", variant, u, got[:10], model, want[:10])
			}
		}
	}
}

// OPT-ADG (Algorithm 4.2) lowers the training 1 − ADG: started from the
// reversed aggsum predictor, which ranks co-consumed items last, it must
// recover most of the training ADG of the aggsum ranking (item-p, a known
// good ranking on this clustered data) — and the same seed gives the same
// θ.
func TestOptADG_lowersTrainingLoss(t *testing.T) {
	x := generated(t, 13, 200, 150, 15)
	ctx := context.Background()
	v, _ := variantOf("febr-i-cosine")
	data, err := prepare(ctx, x, v, recsys.Params{K: 10}.WithDefaults(), Options{MemoryBudget: 1 << 30}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := data.train
	good := ts.ext.initialTheta()
	bad := slices.Clone(good)
	for f := range bad {
		bad[f] = -bad[f]
	}
	cfg := optConfig{lambda: 1e-4, eta: 0.01, gamma: 50, maxIter: 30_000, evalEvery: 5000, patience: 5, seed: 3}
	res, err := ts.optADG(ctx, bad, cfg, ts)
	if err != nil {
		t.Fatal(err)
	}
	before, after, target := trainingADG(ts, bad), trainingADG(ts, res.theta), trainingADG(ts, good)
	t.Logf("training ADG: reversed %.4f, after OPT-ADG %.4f, aggsum %.4f", before, after, target)
	if !(after > before+0.5*(target-before)) {
		t.Fatalf("training ADG %.4f → %.4f, want most of the way to %.4f", before, after, target)
	}
	again, err := ts.optADG(ctx, bad, cfg, ts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.theta, again.theta) {
		t.Fatal("the same seed gave a different θ")
	}
	// Without the memo (blocks recomputed per visit) the result is as good.
	stream, err := newTrainSet(ctx, x, ts.ext, nil, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	sres, err := stream.optADG(ctx, bad, cfg, stream)
	if err != nil {
		t.Fatal(err)
	}
	// Without the memo, the features of the pairs a step looks at are
	// computed on demand, to the bit what the memo holds: the same steps.
	if !slices.Equal(sres.theta, res.theta) {
		t.Fatalf("streaming θ %v differs from the memo's %v", sres.theta, res.theta)
	}
	// Streaming prepares a batch of users' views in parallel and steps
	// through them in order: one worker or two take the same steps.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, err := stream.optADG(ctx, bad, cfg, stream)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(2)
	two, err := stream.optADG(ctx, bad, cfg, stream)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(one.theta, sres.theta) || !slices.Equal(two.theta, sres.theta) {
		t.Fatalf("streaming θ depends on the workers: %v (1), %v (2), %v", one.theta, two.theta, sres.theta)
	}
}

func febrModels() []string {
	var out []string
	for _, name := range recsys.Names() {
		if IsVariant(name) {
			out = append(out, name)
		}
	}
	return out
}

func TestFEBR_MarshalBinary_roundTrip(t *testing.T) {
	x, _ := randomMatrix(t, 41, 50, 40, 0.15)
	for _, name := range febrModels() {
		t.Run(name, func(t *testing.T) {
			m := fitted(t, name, x, recsys.Params{K: 6, L1: 0.5, L2: 1, Options: &Options{Iterations: 3000}})
			data, back := roundTrip(t, name, m, x)
			pm, pb := recsys.ParamsOf(m), recsys.ParamsOf(back)
			for k, v := range pm {
				if pb[k] != v {
					t.Fatalf("parameter %s: %v, loaded %v", k, v, pb[k])
				}
			}
			for _, bad := range [][]byte{data[:len(data)-1], append(slices.Clone(data), 0)} {
				if _, err := recsys.Load(bad); err == nil {
					t.Fatalf("Load accepted %d corrupt bytes", len(bad))
				}
			}
		})
	}
}

func TestFEBR_Score_unknownItemsAndConcurrency(t *testing.T) {
	x := generated(t, 42, 120, 80, 10)
	for _, name := range []string{"febr-iu-kunn", "febr"} {
		m := fitted(t, name, x, recsys.Params{K: 6, Options: &Options{Iterations: 2000}})
		h := x.Row(3)
		want := make([]float64, 80)
		m.Score(h, want)
		got := make([]float64, 85)
		m.Score(append(slices.Clone(h), 80, 84), got)
		if !slices.Equal(got[:80], want) || !slices.Equal(got[80:], make([]float64, 5)) {
			t.Fatalf("%s: unknown items changed the scores", name)
		}
		// Concurrent scoring (run under -race) gives the lone scores.
		wantAll := make([][]float64, x.Users())
		for u := range wantAll {
			wantAll[u] = make([]float64, 80)
			recsys.ScoreUser(m, u, x.Row(u), wantAll[u])
		}
		done := make(chan bool, 4)
		for w := range 4 {
			go func() {
				ok := true
				s := make([]float64, 80)
				for u := w; u < x.Users(); u += 4 {
					recsys.ScoreUser(m, u, x.Row(u), s)
					ok = ok && slices.Equal(s, wantAll[u])
				}
				done <- ok
			}()
		}
		for range 4 {
			if !<-done {
				t.Fatalf("%s: concurrent scores differ", name)
			}
		}
	}
}

func TestFEBR_Fit_deterministicAndCancelled(t *testing.T) {
	x := generated(t, 43, 150, 100, 12)
	train, val := holdOut(t, x, 0.2, 2)
	p := recsys.Params{K: 8, Options: &Options{Validation: val, EvalEvery: 2000, Seed: 5}}
	a, _ := fitted(t, "febr-iu-cosine", train, p).MarshalBinary()
	b, _ := fitted(t, "febr-iu-cosine", train, p).MarshalBinary()
	if !slices.Equal(a, b) {
		t.Fatal("two fits with the same seed differ")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, _ := recsys.New("febr")
	if err := m.Fit(ctx, train, p); err == nil {
		t.Fatal("no error from a cancelled context")
	}
}

// Search returns the trial with the best validation ADG, whose θ is
// never worse on validation than the aggsum predictor it starts from
// (early stopping keeps the best θ, evaluated from iteration 0), and its
// validation ADG is the one the model's own scores give.
func TestSearchFEBR_bestOfTrials(t *testing.T) {
	x := generated(t, 44, 200, 120, 12)
	train, val := holdOut(t, x, 0.2, 3)
	ctx := context.Background()
	cache := recsys.NewNeighbourCache(train, 20)
	for _, name := range []string{"febr-i-slim", "febr-u-kunn"} {
		g := Grid{K: []int{5, 20}, Lambda: []float64{1e-3, 1e-1}, SLIM: [][2]float64{{1, 1}, {0.1, 1}}}
		steps := 0
		g.OnTrial = func(Trial) { steps++ }
		opts := &Options{Validation: val, EvalEvery: 2000, Patience: 2}
		best, trials, err := Search(ctx, name, train, g, recsys.Params{Cache: cache, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		wantSteps := 4
		if name == "febr-i-slim" {
			wantSteps += 4
		}
		if len(trials) != 4 || steps != wantSteps {
			t.Fatalf("%s: %d trials, %d steps", name, len(trials), steps)
		}
		top := -1.0
		for _, tr := range trials {
			top = max(top, tr.ValidationADG)
			base := tr.SLIMValidationADG
			if name != "febr-i-slim" {
				m := fitted(t, "kunn-u", train, recsys.Params{K: tr.K})
				base, _ = modelValidationADG(ctx, m, train, val)
			}
			if tr.ValidationADG < base-1e-12 {
				t.Fatalf("%s k=%d λ=%g: validation ADG %.5f below the baseline's %.5f", name, tr.K, tr.Lambda, tr.ValidationADG, base)
			}
		}
		if best.Info().ValidationADG != top {
			t.Fatalf("%s: best %.5f, top trial %.5f", name, best.Info().ValidationADG, top)
		}
		// KByBaseline: OPT-ADG runs at the k whose starting predictor
		// ranks best, and the result is no worse than it.
		g.KByBaseline = true
		base := map[int]float64{} // per k, the starting predictor's validation ADG
		g.OnTrial = func(tr Trial) {
			if tr.Lambda == 0 {
				base[tr.K] = max(base[tr.K], tr.ValidationADG, tr.SLIMValidationADG)
			}
		}
		quick, qtrials, err := Search(ctx, name, train, g, recsys.Params{Cache: cache, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		if len(base) != 2 || len(qtrials) != 2 {
			t.Fatalf("%s KByBaseline: %d baselines, %d trials", name, len(base), len(qtrials))
		}
		kb := 5
		if base[20] > base[5] {
			kb = 20
		}
		if qk := recsys.ParamsOf(quick)["k"]; int(qk) != kb || quick.Info().ValidationADG < base[kb] {
			t.Fatalf("%s KByBaseline: k=%v ADG %.5f, baselines %v", name, qk, quick.Info().ValidationADG, base)
		}
		if name == "febr-u-kunn" {
			// Given kunn-u's choice by validation ADG over the same grid
			// (its ranking is the aggsum predictor's), the search takes
			// its k and compares no other baseline: the same model.
			var chosen recsys.Model
			top := -1.0
			for _, k := range g.K {
				m := fitted(t, "kunn-u", train, recsys.Params{K: k})
				if adg, _ := modelValidationADG(ctx, m, train, val); adg > top {
					chosen, top = m, adg
				}
			}
			clear(base)
			o := *opts
			o.Baselines = []recsys.Model{chosen}
			taken, _, err := Search(ctx, name, train, g, recsys.Params{Cache: cache, Options: &o})
			if err != nil {
				t.Fatal(err)
			}
			if len(base) != 0 || recsys.ParamsOf(taken)["k"] != recsys.ParamsOf(quick)["k"] || !slices.Equal(taken.theta, quick.theta) {
				t.Fatalf("given kunn-u k=%v: %d baselines compared, k=%v θ %v; without it k=%v θ %v",
					recsys.ParamsOf(chosen)["k"], len(base), recsys.ParamsOf(taken)["k"], taken.theta, recsys.ParamsOf(quick)["k"], quick.theta)
			}
		}
		dense, err := modelValidationADG(ctx, best, train, val)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(dense, top, 1e-12) {
			t.Fatalf("%s: the model scores give validation ADG %.6f, the search %.6f", name, dense, top)
		}
	}
}

// With θ on aggsum alone, an item's contributions add up to its score less
// the missing score: they are the terms of the item aggsum.
func TestFEBR_Explain_sumsToScore(t *testing.T) {
	x := generated(t, 45, 100, 60, 10)
	m := fitted(t, "febr-iu-cosine", x, recsys.Params{K: 6, Options: &Options{Iterations: -1}}).(*Model)
	for f := range m.theta {
		m.theta[f] = 0
	}
	m.theta[aggSum], m.theta[featuresPerSide+aggSum] = 2, 0.5
	m.set(m.ext, x, m.k, 0, 0, 0, m.theta)
	h := x.Row(7)
	scores := make([]float64, 60)
	m.Score(h, scores)
	items := []uint32{0, 5, 11, 30}
	for k, cs := range m.Explain(h, items, 1000) {
		sum := 0.0
		for _, c := range cs {
			sum += c.Weight
		}
		if want := scores[items[k]] - m.sMiss; !closeTo(sum, want, 1e-9) {
			t.Fatalf("item %d: contributions add to %g, score − missing score is %g", items[k], sum, want)
		}
	}
}

// FEBRi-slim's similar items are slim's: the neighbours with a non-zero
// fsSLIM weight, by weight.
func TestFEBR_Similar_slimAsSLIM(t *testing.T) {
	x := generated(t, 46, 120, 80, 10)
	p := recsys.Params{K: 8, L1: 0.5, L2: 1, Options: &Options{Iterations: -1}}
	f := fitted(t, "febr", x, p).(*Model)
	s := fitted(t, "slim", x, p).(*recsys.ItemP)
	for i := range uint32(80) {
		if got, want := f.Similar(i), s.Similar(i); !slices.Equal(got, want) {
			t.Fatalf("item %d: %v, slim %v", i, got, want)
		}
	}
}

// The holdout splits every user's items into disjoint histories and
// positives (at least one kept in the history), and a fit that learns from
// it is, like any, no worse on validation than its starting predictor.
func TestFEBR_Fit_holdout(t *testing.T) {
	x := generated(t, 47, 150, 100, 12)
	ho, err := newHoldout(x, 0.3, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for u := range x.Users() {
		rest, pos := ho.x.Row(u), ho.pos[u]
		all := slices.Sorted(slices.Values(append(slices.Clone(rest), pos...)))
		if !slices.Equal(all, x.Row(u)) || (x.UserCount(u) > 0 && len(rest) == 0) {
			t.Fatalf("user %d: rest %v + held out %v ≠ %v", u, rest, pos, x.Row(u))
		}
		if n := x.UserCount(u); n >= 2 && len(pos) != min(n-1, max(1, int(math.Round(0.3*float64(n))))) {
			t.Fatalf("user %d: %d of %d held out", u, len(pos), n)
		}
	}
	train, val := holdOut(t, x, 0.2, 4)
	m := fitted(t, "febr-i-kunn", train, recsys.Params{K: 8, Options: &Options{Validation: val, Holdout: 0.2, EvalEvery: 2000, Patience: 2}}).(*Model)
	base, _ := modelValidationADG(context.Background(), fitted(t, "kunn-i", train, recsys.Params{K: 8}), train, val)
	if m.Info().ValidationADG < base-1e-12 {
		t.Fatalf("validation ADG %.5f below kunn-i's %.5f", m.Info().ValidationADG, base)
	}
}

// The features OPT-ADG computes per pair from a user's view are, to the
// bit, the rows of the user's block (extract), and missing exactly where
// the block has no row: for every variant, every user and every item.
func TestFEBR_pair_matchesBlock(t *testing.T) {
	x := generated(t, 21, 120, 90, 12)
	ctx := context.Background()
	for _, name := range febrModels() {
		v, _ := variantOf(name)
		ext, err := extractorFor(ctx, x, v, recsys.Params{K: 7}.WithDefaults(), nil)
		if err != nil {
			t.Fatal(err)
		}
		mean, std := make([]float64, ext.dim), make([]float64, ext.dim)
		for f := range std {
			mean[f], std[f] = 0.1*float64(f), 1+0.5*float64(f)
		}
		ext.setStats(mean, std)
		var (
			b        block
			view     view
			raw, z   = make([]float64, ext.dim), make([]float64, ext.dim)
			rows, on int
			byIndex  = ext.pairRows()
		)
		for u := range x.Users() {
			ext.block(u, x.Row(u), &b)
			ext.view(&view, u, x.Row(u), nil)
			// Every item looked at, some twice: the user side of each
			// counted once.
			view.pos, view.negs = 0, view.negs[:0]
			for i := range x.Items() {
				view.negs = append(view.negs, uint32(i), uint32(i)/2)
			}
			ext.lookAt(&view, x.Row(u))
			for i := range x.Items() {
				q, inBlock := slices.BinarySearch(b.items, uint32(i))
				found := ext.pair(&view, byIndex, uint32(i), raw)
				if found != inBlock {
					t.Fatalf("%s user %d item %d: pair found %v, block %v", name, u, i, found, inBlock)
				}
				if !found {
					if !slices.Equal(raw, ext.missingRaw()) {
						t.Fatalf("%s user %d item %d: missing pair with features %v", name, u, i, raw)
					}
					continue
				}
				ext.zscore(raw, z)
				if !slices.Equal(z, b.row(q, ext.dim)) {
					t.Fatalf("%s user %d item %d: pair %v, block %v", name, u, i, z, b.row(q, ext.dim))
				}
				rows++
				if raw[aggLen] > 1/float64(ext.k) {
					on++ // an active set of several entries: the order of the sum matters
				}
			}
		}
		if rows == 0 || on == 0 {
			t.Fatalf("%s: %d pairs with features, %d with several active entries: the test does not bite", name, rows, on)
		}
	}
}

// The z-score statistics come from the users of statsSample alone, with
// the memo or without it: the mean and standard deviation of the raw
// features of those users' candidates, not of everyone's.
func TestFEBR_statsFromSample(t *testing.T) {
	x := generated(t, 33, 120, 90, 12)
	ctx := context.Background()
	v, _ := variantOf("febr-iu-kunn")
	defer func(n int) { statsUsers = n }(statsUsers)
	statsUsers = 25
	sample := statsSample(x.Users())
	if len(sample) != 25 || !slices.IsSorted(sample) || len(slices.Compact(slices.Clone(sample))) != 25 || sample[24] < 60 {
		t.Fatalf("sample %v: want 25 distinct users ascending, spread over the 120", sample)
	}
	newExt := func() *extractor {
		ext, err := extractorFor(ctx, x, v, recsys.Params{K: 7}.WithDefaults(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return ext
	}
	direct := func(users []int) (mean, std []float64) {
		ext := newExt()
		total := newFeatureStats(ext.dim)
		for _, u := range users {
			s := newFeatureStats(ext.dim)
			ext.extract(u, x.Row(u), func(_ uint32, raw []float64) { s.add(raw) })
			total.merge(s)
		}
		return total.meanStd()
	}
	wantMean, wantStd := direct(sample)
	everyone := make([]int, x.Users())
	for u := range everyone {
		everyone[u] = u
	}
	fullMean, _ := direct(everyone)
	if slices.Equal(fullMean, wantMean) {
		t.Fatal("the sample's statistics equal everyone's: the test does not bite")
	}
	for _, budget := range []int64{1 << 30, -1} {
		ts, err := newTrainSet(ctx, x, newExt(), nil, budget, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (ts.blocks != nil) != (budget > 0) {
			t.Fatalf("budget %d: memo %v", budget, ts.blocks != nil)
		}
		if !slices.Equal(ts.ext.mean, wantMean) || !slices.Equal(ts.ext.std, wantStd) {
			t.Fatalf("budget %d: statistics %v %v, want the sample's %v %v", budget, ts.ext.mean, ts.ext.std, wantMean, wantStd)
		}
	}
}

// With a neighbour cache, the user side memoises KNN(u) of the training
// users at k_max: the same model to the byte as without it, and the memo
// is filled by the fit (so it is used) and not kept by the fitted model.
func TestFEBR_Fit_userNeighboursMemo(t *testing.T) {
	x := generated(t, 17, 150, 100, 12)
	train, val := holdOut(t, x, 0.2, 2)
	for _, name := range []string{"febr-u-cosine", "febr-iu-kunn"} {
		for _, budget := range []int64{1 << 30, -1} {
			p := recsys.Params{K: 6, Options: &Options{Validation: val, EvalEvery: 500, Patience: 2, MemoryBudget: budget}}
			want, _ := fitted(t, name, train, p).MarshalBinary()
			cache := recsys.NewNeighbourCache(train, 20)
			p.Cache = cache
			m := fitted(t, name, train, p).(*Model)
			got, _ := m.MarshalBinary()
			if string(got) != string(want) {
				t.Fatalf("%s budget %d: the fit with the KNN(u) memo differs", name, budget)
			}
			v, _ := variantOf(name)
			kind := recsys.SimCosine
			if v.affinity == recsys.SimKUNN {
				kind = recsys.SimKUNN
			}
			filled := cache.MemoisedUsers(kind)
			if filled == 0 || m.ext.users.Memoising() {
				t.Fatalf("%s budget %d: %d users memoised, model keeps the memo: %v", name, budget, filled, m.ext.users.Memoising())
			}
		}
	}
}

// Without the memo, OPT-ADG draws its users from userSample(nu,
// drawUsers), a superset of the statistics' sample, and computes the
// pairs it looks at on demand (the user side from the view's dense
// accumulation): the same steps as the memo restricted to those users.
func TestFEBR_streamingDrawsFromSample(t *testing.T) {
	x := generated(t, 41, 150, 80, 10)
	ctx := context.Background()
	defer func(d, s int) { drawUsers, statsUsers = d, s }(drawUsers, statsUsers)
	drawUsers, statsUsers = 40, 15
	draw := userSample(x.Users(), drawUsers)
	if len(draw) != 40 || !slices.IsSorted(draw) {
		t.Fatalf("draw sample %v: want 40 users ascending", draw)
	}
	for _, u := range statsSample(x.Users()) {
		if _, ok := slices.BinarySearch(draw, u); !ok {
			t.Fatalf("statistics user %d is not in the draw sample %v", u, draw)
		}
	}
	v, _ := variantOf("febr-iu-kunn")
	data, err := prepare(ctx, x, v, recsys.Params{K: 6}.WithDefaults(), Options{MemoryBudget: 1 << 30}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	memo := data.train
	if memo.blocks == nil || len(memo.eligible) != x.Users() {
		t.Fatalf("memo: %d eligible of %d users (blocks %v): the memo draws from everyone", len(memo.eligible), x.Users(), memo.blocks != nil)
	}
	stream, err := newTrainSet(ctx, x, memo.ext, nil, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []int32
	for _, u := range draw {
		want = append(want, int32(u))
	}
	if !slices.Equal(stream.eligible, want) {
		t.Fatalf("streaming draws from %v, want the sample %v", stream.eligible, want)
	}
	restricted := *memo
	restricted.eligible = want
	cfg := optConfig{lambda: 1e-3, eta: 0.01, gamma: 20, maxIter: 6_000, evalEvery: 2000, patience: 5, seed: 9}
	theta0 := memo.ext.initialTheta()
	a, err := restricted.optADG(ctx, theta0, cfg, memo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := stream.optADG(ctx, theta0, cfg, stream)
	if err != nil {
		t.Fatal(err)
	}
	if a.updates == 0 || slices.Equal(a.theta, theta0) {
		t.Fatalf("%d updates: the test does not bite", a.updates)
	}
	if !slices.Equal(a.theta, b.theta) || a.updates != b.updates {
		t.Fatalf("streaming θ %v (%d updates), memo on the sample %v (%d)", b.theta, b.updates, a.theta, a.updates)
	}
}

// A search runs its λs concurrently (trainEach) and gets the trials and
// model of running them one after another, streaming with a validation
// memo that keeps only some users (filled once, before the runs).
func TestSearchFEBR_lambdasConcurrently(t *testing.T) {
	x := generated(t, 45, 220, 100, 12)
	train, val := holdOut(t, x, 0.2, 4)
	ctx := context.Background()
	defer func(n int64) { validationMemo = n }(validationMemo)
	validationMemo = 20_000 // bytes: a share of the validation users' blocks
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	search := func(procs int) (*Model, []Trial, int) {
		runtime.GOMAXPROCS(procs)
		g := Grid{K: []int{8}, Lambda: []float64{1e-4, 1e-2, 1e-1}}
		calls := 0
		p := recsys.Params{Cache: recsys.NewNeighbourCache(train, 8), Progress: func(string, int, int) { calls++ },
			Options: &Options{Validation: val, EvalEvery: 1000, Patience: 2, MemoryBudget: -1}}
		best, trials, err := Search(ctx, "febr-iu-cosine", train, g, p)
		if err != nil {
			t.Fatal(err)
		}
		return best, trials, calls
	}
	one, trials1, calls1 := search(1)
	two, trials2, calls2 := search(2)
	if !one.Info().Streaming || len(trials1) != 3 {
		t.Fatalf("streaming %v, %d trials: the test does not exercise the memo's runs", one.Info().Streaming, len(trials1))
	}
	distinct := map[float64]bool{}
	for c := range trials1 {
		a, b := trials1[c], trials2[c]
		distinct[a.ValidationADG] = true
		if a.Lambda != b.Lambda || a.ValidationADG != b.ValidationADG || a.Iterations != b.Iterations {
			t.Fatalf("trial %d: one worker λ=%g ADG %.6f at %d iterations, two λ=%g ADG %.6f at %d", c, a.Lambda, a.ValidationADG, a.Iterations, b.Lambda, b.ValidationADG, b.Iterations)
		}
	}
	if len(distinct) < 2 {
		t.Fatalf("every λ scored %v: the test does not bite", distinct)
	}
	if !slices.Equal(one.Theta(), two.Theta()) || calls1 == 0 || calls2 == 0 {
		t.Fatalf("θ %v against %v; progress calls %d, %d", one.Theta(), two.Theta(), calls1, calls2)
	}
}

// A KByBaseline search of FEBRiu given both sides' baselines compares its
// aggsum predictor at their k's alone, and is then the search of the grid
// reduced to those k's; with one k (the sides agree) it compares none, and
// without both baselines it compares every k of the grid.
func TestSearchFEBR_iuTakesItsSidesKs(t *testing.T) {
	x := generated(t, 46, 150, 100, 12)
	train, val := holdOut(t, x, 0.2, 4)
	ctx := context.Background()
	cache := recsys.NewNeighbourCache(train, 20)
	search := func(name string, ks []int, baselines ...recsys.Model) (*Model, []int) {
		t.Helper()
		var compared []int
		g := Grid{K: ks, Lambda: []float64{1e-2}, KByBaseline: true, OnTrial: func(tr Trial) {
			if tr.Lambda == 0 {
				compared = append(compared, tr.K)
			}
		}}
		m, _, err := Search(ctx, name, train, g, recsys.Params{Cache: cache, Options: &Options{Validation: val, EvalEvery: 2000, Patience: 2, Baselines: baselines}})
		if err != nil {
			t.Fatal(err)
		}
		return m, compared
	}
	grid := []int{5, 10, 20}
	for _, c := range []struct{ name, item, user string }{{"febr-iu-cosine", "itemknn", "userknn"}, {"febr-iu-kunn", "kunn-i", "kunn-u"}} {
		item5, user20 := fitted(t, c.item, train, recsys.Params{K: 5}), fitted(t, c.user, train, recsys.Params{K: 20})
		got, compared := search(c.name, grid, user20, item5)
		want, wantCompared := search(c.name, []int{5, 20})
		if !slices.Equal(compared, []int{5, 20}) || !slices.Equal(wantCompared, []int{5, 20}) {
			t.Fatalf("%s given k 5 and 20: compared k %v; the grid {5, 20} alone compares %v", c.name, compared, wantCompared)
		}
		if got.k != want.k || !slices.Equal(got.theta, want.theta) {
			t.Fatalf("%s given k 5 and 20: k %d θ %v; the grid {5, 20}: k %d θ %v", c.name, got.k, got.theta, want.k, want.theta)
		}
		// A baseline past the grid's end counts as that end; both at 20:
		// OPT-ADG runs at 20 with nothing to compare.
		user30 := fitted(t, c.user, train, recsys.Params{K: 30})
		one, compared := search(c.name, grid, fitted(t, c.item, train, recsys.Params{K: 20}), user30)
		if len(compared) != 0 || one.k != 20 {
			t.Fatalf("%s given k 20 and 30: compared k %v, chose k %d", c.name, compared, one.k)
		}
		// One side's baseline alone, or a baseline of the other affinity:
		// every k is compared.
		other := fitted(t, "userknn", train, recsys.Params{K: 20})
		if c.user == "userknn" {
			other = fitted(t, "kunn-u", train, recsys.Params{K: 20})
		}
		for _, bs := range [][]recsys.Model{{item5}, {item5, other}} {
			if _, compared := search(c.name, grid, bs...); !slices.Equal(compared, grid) {
				t.Fatalf("%s given %d baselines, one of them its own: compared k %v, want the grid %v", c.name, len(bs), compared, grid)
			}
		}
	}
}

// knownBefore counts the marked popularity positions below p, as a scan
// does: at the ends of a word, past the first word and at the last
// position, with marks on either side of each.
func TestBlockRanker_knownBefore(t *testing.T) {
	const n = 200
	rng := rand.New(rand.NewPCG(12, 3))
	var r blockRanker
	r.known = grow(r.known, (n+63)/64)
	marked := make([]bool, n)
	for _, p := range []int{0, 1, 62, 63, 64, 65, 127, 128, 199} {
		marked[p] = true
		setBit(r.known, uint32(p))
	}
	for range 40 {
		p := rng.IntN(n)
		marked[p] = true
		setBit(r.known, uint32(p))
	}
	for _, p := range []int{0, 1, 62, 63, 64, 65, 100, 127, 128, 129, 199} {
		want := 0
		for q := range p {
			if marked[q] {
				want++
			}
		}
		if got := r.knownBefore(int32(p)); got != want {
			t.Errorf("below %d: %d, want %d", p, got, want)
		}
	}
}

// A variant's search hands Tune the chosen model's validation ranks from
// OPT-ADG's early stopping: RankHeldOut's of the model, for every user
// with validation items, with the memo, streaming with every validation
// block kept, and streaming with a validation memo that keeps some users
// only (the ranks then come from the final pass over them all).
func TestFEBRSearch_validationRanksAreTheModels(t *testing.T) {
	x := generated(t, 47, 200, 90, 12)
	train, val := holdOut(t, x, 0.2, 5)
	ctx := context.Background()
	defer func(n int64) { validationMemo = n }(validationMemo)
	for _, c := range []struct {
		name    string
		budget  int64
		valMemo int64
	}{{"febr-iu-kunn", 1 << 30, 1 << 30}, {"febr-u-cosine", -1, 1 << 30}, {"febr-iu-kunn", -1, 8_000}} {
		validationMemo = c.valMemo
		v, _ := variantOf(c.name)
		p := recsys.Params{Options: &Options{EvalEvery: 300, Patience: 2, MaxIterations: 3000, MemoryBudget: c.budget}}
		ch, err := v.search(ctx, train, val, recsys.Grid{K: []int{5, 10}, Lambda: []float64{1e-3, 1e-2}}, recsys.Caps{}, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		rk, _, err := recsys.RankHeldOut(ctx, ch.Model, train, train.Popularity(), [][][]uint32{val}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.ValidationRanks) != train.Users() {
			t.Fatalf("%s budget %d: ranks of %d users, the matrix has %d", c.name, c.budget, len(ch.ValidationRanks), train.Users())
		}
		users, sum := 0, 0.0
		for u := range train.Users() {
			if !slices.Equal(ch.ValidationRanks[u], rk[0][u]) {
				t.Fatalf("%s budget %d validation memo %d: user %d ranks %v, the model's %v",
					c.name, c.budget, c.valMemo, u, ch.ValidationRanks[u], rk[0][u])
			}
			if len(val[u]) > 0 {
				users++
				sum += metrics.ADG(rk[0][u])
			}
		}
		if users == 0 || math.Abs(sum/float64(users)-ch.ValidationADG) > 1e-12 {
			t.Fatalf("%s: %d users, mean ADG %v, the choice's %v", c.name, users, sum/float64(max(users, 1)), ch.ValidationADG)
		}
	}
}

// A FEBR variant's search (reuse) gets the job's choices of its baselines, both
// sides' for FEBRiu, in order, and none it did not tune.
func TestFEBRBaselines(t *testing.T) {
	fits := map[string]recsys.Fit{}
	for _, n := range []string{"itemknn", "userknn", "kunn-i", "slim"} {
		m, err := recsys.New(n)
		if err != nil {
			t.Fatal(err)
		}
		fits[n] = recsys.Fit{Tuned: m}
	}
	for name, want := range map[string][]string{
		"febr-iu-cosine": {"itemknn", "userknn"}, "febr-iu-kunn": {"kunn-i"}, "febr-u-cosine": {"userknn"},
		"febr-u-kunn": nil, "febr-i-slim": nil, "febr": nil,
	} {
		v, ok := variantOf(name)
		if !ok {
			t.Fatalf("%s is not a FEBR variant", name)
		}
		var got []string
		for _, m := range v.tunedBaselines(fits) {
			got = append(got, m.Name())
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: baselines %v, want %v", name, got, want)
		}
	}
}

// A FEBRi-slim refit takes the job's slim refit when the search chose
// slim's k and fsSLIM pair, though the search's refit parameters carry no
// SLIM model of their own; with another k it fits its own, and a variant
// over another affinity never takes it.
func TestReuse_refitTakesSlimsRefit(t *testing.T) {
	x := generated(t, 3, 40, 30, 8)
	slim := fitted(t, "slim", x, recsys.Params{K: 10, L1: 1, L2: 1})
	fits := map[string]recsys.Fit{"slim": {Tuned: slim, Full: slim}}
	fs, _ := variantOf(Name)
	got := fs.reuse().Refit(recsys.Params{K: 10, L1: 1, L2: 1, Options: &Options{}}, fits, x)
	if o, ok := got.Options.(*Options); !ok || o.SLIM != slim {
		t.Fatalf("refit at slim's k and pair: SLIM %v, want the job's slim refit", got.Options)
	}
	other := fs.reuse().Refit(recsys.Params{K: 20, L1: 1, L2: 1, Options: &Options{}}, fits, x)
	if o := other.Options.(*Options); o.SLIM != nil {
		t.Fatalf("refit at k = 20 took slim's k = 10 refit")
	}
	cos, _ := variantOf("febr-i-cosine")
	if o := cos.reuse().Refit(recsys.Params{K: 10, L1: 1, L2: 1, Options: &Options{}}, fits, x).Options.(*Options); o.SLIM != nil {
		t.Fatalf("febr-i-cosine took slim's refit")
	}
}
