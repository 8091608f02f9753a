package febr

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// noiseModel scores every item with uniform noise drawn from a hash of the
// history: a base model that carries no signal.
type noiseModel struct {
	n      int
	stream uint64 // another stream: another noise
}

func (m *noiseModel) Name() string                                             { return "noise" }
func (m *noiseModel) Fit(context.Context, *recsys.Matrix, recsys.Params) error { return nil }
func (m *noiseModel) MarshalBinary() ([]byte, error)                           { return nil, errors.New("noise") }
func (m *noiseModel) UnmarshalBinary([]byte) error                             { return errors.New("noise") }
func (m *noiseModel) Score(history []uint32, scores []float64) {
	h := fnv.New64a()
	for _, i := range history {
		h.Write([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
	}
	rng := rand.New(rand.NewPCG(h.Sum64(), 5+m.stream))
	clear(scores)
	for i := range min(m.n, len(scores)) {
		scores[i] = rng.Float64()
	}
}

// With one base that carries the signal (itemknn on clustered data) and one
// that is pure noise, the blend learns to ignore the noise: OPT-ADG starts
// from the better base and the noise weight stays near 0, as does the
// direct search's, and the blend ranks the held-out items as well as the
// good base alone.
func TestBlend_noiseBaseGetsNoWeight(t *testing.T) {
	x := generated(t, 21, 300, 150, 15)
	ctx := context.Background()
	ho, err := newHoldout(x, 0.2, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	good := fitted(t, "itemknn", ho.x, recsys.Params{K: 20})
	st, err := blendStackOf(ctx, ho, []recsys.Model{&noiseModel{n: x.Items()}, good}, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	start, err := st.bestSingle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(start, []float64{0, 1}) {
		t.Fatalf("best single base %v, want itemknn's [0 1]", start)
	}
	goodADG, _ := st.adg(ctx, start)
	noiseADG, _ := st.adg(ctx, []float64{1, 0})
	if goodADG < noiseADG+0.05 {
		t.Fatalf("itemknn held-out ADG %.4f, noise %.4f: the data carry no signal", goodADG, noiseADG)
	}
	res, err := st.learn(ctx, (&Options{Iterations: 20000, Seed: 1}).withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	direct, directADG, err := st.ascend(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("OPT-ADG θ %v (%d of %d iterations stepped), direct θ %v", res.theta, res.updates, res.iterations, direct)
	for name, theta := range map[string][]float64{"OPT-ADG": res.theta, "direct": direct} {
		if theta[1] <= 0 || math.Abs(theta[0]) > 0.1*theta[1] {
			t.Errorf("%s θ = %v: the noise weight is not near 0 relative to itemknn's", name, theta)
		}
		adg, _ := st.adg(ctx, theta)
		if adg < goodADG-0.005 {
			t.Errorf("%s θ = %v: held-out ADG %.4f below itemknn's %.4f", name, theta, adg, goodADG)
		}
	}
	if directADG < goodADG {
		t.Errorf("direct search ended at %.4f below its start %.4f", directADG, goodADG)
	}
}

// z-scoring a base per user is an increasing affine map of its scores, so
// a blend with one non-zero weight ranks exactly as that base (the
// dissertation's identity for the aggsum predictor, §4.5.5), and a blend's
// score is Σ_b θ_b z_b computed by hand.
func TestBlend_identityAndHandComputedScore(t *testing.T) {
	x := generated(t, 5, 120, 90, 10)
	pop := x.Popularity()
	a, b := fitted(t, "itemknn", x, recsys.Params{K: 10}), fitted(t, "kunn", x, recsys.Params{K: 10})
	one := &Blend{}
	one.set([]string{"itemknn", "kunn"}, []recsys.Model{a, b}, make([]recsys.Params, 2), []float64{0, 2.5}, x.Items())
	mix := &Blend{}
	theta := []float64{0.7, -0.3}
	mix.set([]string{"itemknn", "kunn"}, []recsys.Model{a, b}, make([]recsys.Params, 2), theta, x.Items())
	sa, sb, got := make([]float64, x.Items()), make([]float64, x.Items()), make([]float64, x.Items())
	for u := range x.Users() {
		hist := x.Row(u)
		recsys.ScoreUser(b, u, hist, sb)
		recsys.ScoreUser(one, u, hist, got)
		// The same order, up to scores equal within rounding, which the
		// affine map may make exactly equal (then popularity decides).
		g := recsys.TopN(got, pop, hist, x.Items())
		for q := 1; q < len(g); q++ {
			if hi, lo := sb[g[q-1]], sb[g[q]]; hi < lo-1e-12*max(1, math.Abs(lo)) {
				t.Fatalf("user %d: the blend of kunn alone ranks %d (kunn %v) before %d (kunn %v)", u, g[q-1], hi, g[q], lo)
			}
		}
		recsys.ScoreUser(a, u, hist, sa)
		recsys.ScoreUser(mix, u, hist, got)
		za, zb := handZ(sa, hist), handZ(sb, hist)
		for i := range got {
			if want := theta[0]*za[i] + theta[1]*zb[i]; !closeTo(got[i], want, 1e-9) {
				t.Fatalf("user %d item %d: score %v, want %v", u, i, got[i], want)
			}
		}
	}
}

// handZ z-scores s over the items not in hist, the long way.
func handZ(s []float64, hist []uint32) []float64 {
	var rest []float64
	for i, v := range s {
		if !slices.Contains(hist, uint32(i)) {
			rest = append(rest, v)
		}
	}
	mean := 0.0
	for _, v := range rest {
		mean += v
	}
	mean /= float64(len(rest))
	varc := 0.0
	for _, v := range rest {
		varc += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(varc / float64(len(rest)))
	out := make([]float64, len(s))
	for i, v := range s {
		if sd > 0 {
			out[i] = (v - mean) / sd
		}
	}
	return out
}

// A fitted blend survives MarshalBinary and Load: same bases, weights,
// parameters and scores; a truncated blob is rejected. A given θ is used
// as it is, a learnt one is the same for the same seed.
func TestBlend_persistenceAndFit(t *testing.T) {
	x := generated(t, 8, 150, 100, 12)
	ctx := context.Background()
	bo := &BlendOptions{Bases: []string{"itemknn", "userknn"}, Params: []recsys.Params{{K: 10}, {K: 20}}}
	learnt := func() *Blend {
		m := &Blend{}
		if err := m.Fit(ctx, x, recsys.Params{Options: &Options{Blend: bo, Iterations: 5000, Seed: 4}}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m, again := learnt(), learnt()
	if !m.Info().Learnt || m.Info().Updates == 0 || !slices.Equal(m.Theta(), again.Theta()) {
		t.Fatalf("learnt θ %v (info %+v), again %v", m.Theta(), m.Info(), again.Theta())
	}
	fixed := *bo
	fixed.Theta = []float64{0.25, 1.5}
	g := &Blend{}
	if err := g.Fit(ctx, x, recsys.Params{Options: &Options{Blend: &fixed}}); err != nil {
		t.Fatal(err)
	}
	if g.Info().Learnt || !slices.Equal(g.Theta(), fixed.Theta) {
		t.Fatalf("given θ %v became %v", fixed.Theta, g.Theta())
	}
	data, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := recsys.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	bb := back.(*Blend)
	if !slices.Equal(bb.Bases(), []string{"itemknn", "userknn"}) || !slices.Equal(bb.Theta(), fixed.Theta) {
		t.Fatalf("loaded bases %v θ %v", bb.Bases(), bb.Theta())
	}
	if pg, pb := recsys.ParamsOf(g), recsys.ParamsOf(back); len(pg) != len(pb) || pb["itemknn.k"] != 10 || pb["userknn.k"] != 20 || pb["w.userknn"] != 1.5 {
		t.Fatalf("loaded params %v, fitted %v", pb, pg)
	}
	s1, s2 := make([]float64, x.Items()+3), make([]float64, x.Items()+3)
	for u := range x.Users() {
		recsys.ScoreUser(g, u, x.Row(u), s1)
		recsys.ScoreUser(back, u, x.Row(u), s2)
		if !slices.Equal(s1, s2) {
			t.Fatalf("user %d: loaded scores differ", u)
		}
	}
	for _, cut := range []int{len(data) - 1, len(data) / 2, 12} {
		if _, err := recsys.Load(data[:cut]); err == nil {
			t.Fatalf("a blob cut at %d of %d loaded", cut, len(data))
		}
	}
}

// The search chooses among the learnt θ and every base alone by their ADG
// over the held-out and validation positives pooled (pooledADG): every
// base alone is that base as its own search chose it (its validation ADG
// the best of its grid), its held-out ADG counts as it is, the learnt θ's
// cross-fitted, and the choice has the highest pooled ADG; its
// parameters refit the same model.
func TestSearchBlend_choiceByPooledADG(t *testing.T) {
	all := generated(t, 30, 200, 120, 14)
	x, val := holdOut(t, all, 0.2, 9)
	ctx := context.Background()
	g := recsys.Grid{K: []int{10, 40}, Lambda: []float64{1e-3}}
	c := recsys.Caps{Items: x.Items(), Users: x.Users() - 1}
	p := recsys.Params{Options: &Options{Blend: &BlendOptions{Bases: []string{"itemknn", "userknn"}}, Iterations: 5000, Seed: 2}}
	fits := 0
	ch, err := searchBlend(ctx, x, val, g, c, p, func() { fits++ })
	if err != nil {
		t.Fatal(err)
	}
	if fits != 5 {
		t.Errorf("%d fits reported, want 2 + 2 base candidates and 1 λ", fits)
	}
	trials := ch.Model.(*Blend).Info().Trials
	byLabel := map[string]BlendTrial{}
	for _, tr := range trials {
		byLabel[tr.Label] = tr
	}
	for _, name := range []string{"itemknn", "userknn"} {
		top := -1.0
		for _, k := range g.K {
			adg, err := modelValidationADG(ctx, fitted(t, name, x, recsys.Params{K: k}), x, val)
			if err != nil {
				t.Fatal(err)
			}
			top = max(top, adg)
		}
		tr, ok := byLabel[name]
		if !ok || math.Abs(tr.ValidationADG-top) > 1e-12 || tr.CrossFitADG != tr.HeldOutADG {
			t.Errorf("%s alone: trial %+v, want validation ADG %.6f (its grid's best) and its held-out ADG counted as it is", name, tr, top)
		}
	}
	direct := byLabel["direct"]
	if direct.CrossFitADG <= 0 || direct.CrossFitADG == direct.HeldOutADG {
		t.Errorf("learnt θ: cross-fitted ADG %.6f, held-out %.6f: not cross-fitted", direct.CrossFitADG, direct.HeldOutADG)
	}
	theta := ch.Model.(*Blend).Theta()
	var chosen *BlendTrial
	for k := range trials {
		tr := &trials[k]
		if tr.ValidationADG == 0 {
			continue // an OPT-ADG θ, not a candidate
		}
		if tr.PooledADG > 0 && (tr.PooledADG < min(tr.CrossFitADG, tr.ValidationADG)-1e-12 || tr.PooledADG > max(tr.CrossFitADG, tr.ValidationADG)+1e-12) {
			t.Errorf("%s: pooled ADG %.6f outside [held-out, validation] = %.6f, %.6f", tr.Label, tr.PooledADG, tr.CrossFitADG, tr.ValidationADG)
		}
		if slices.Equal(tr.Theta, theta) && (chosen == nil || tr.PooledADG > chosen.PooledADG) {
			chosen = tr
		}
	}
	if chosen == nil {
		t.Fatalf("the chosen θ %v is none of the candidates %+v", theta, trials)
	}
	for _, tr := range trials {
		if tr.PooledADG > chosen.PooledADG {
			t.Errorf("%s has pooled ADG %.6f above the chosen %s's %.6f", tr.Label, tr.PooledADG, chosen.Label, chosen.PooledADG)
		}
	}
	if ch.ValidationADG != chosen.ValidationADG {
		t.Errorf("choice validation ADG %.6f, its trial's %.6f", ch.ValidationADG, chosen.ValidationADG)
	}
	// The choice carries its validation ranks: RankHeldOut's of the model.
	rk, _, err := recsys.RankHeldOut(ctx, ch.Model, x, x.Popularity(), [][][]uint32{val}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.ValidationRanks) != x.Users() {
		t.Fatalf("the choice has validation ranks of %d users, the matrix %d", len(ch.ValidationRanks), x.Users())
	}
	for u := range x.Users() {
		if !slices.Equal(ch.ValidationRanks[u], rk[0][u]) {
			t.Fatalf("user %d: the choice's validation ranks %v, the model's %v", u, ch.ValidationRanks[u], rk[0][u])
		}
	}
	m := &Blend{}
	if err := m.Fit(ctx, x, ch.Params); err != nil {
		t.Fatal(err)
	}
	a, b := make([]float64, x.Items()), make([]float64, x.Items())
	for u := range x.Users() {
		recsys.ScoreUser(ch.Model, u, x.Row(u), a)
		recsys.ScoreUser(m, u, x.Row(u), b)
		if !slices.Equal(a, b) {
			t.Fatalf("user %d: the refit scores differently from the chosen model", u)
		}
	}
}

// pooledADG weighs each mean by its number of positives, by hand.
func TestPooledADG_byHand(t *testing.T) {
	for _, c := range []struct {
		held  float64
		nHeld int
		val   float64
		nVal  int
		want  float64
	}{
		{0.3, 3, 0.1, 1, 0.25}, // (0.9 + 0.1) / 4
		{0.2, 5, 0.4, 0, 0.2},
		{0.2, 0, 0.4, 2, 0.4},
		{0.2, 0, 0.4, 0, 0},
	} {
		if got := pooledADG(c.held, c.nHeld, c.val, c.nVal); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("pooledADG(%g, %d, %g, %d) = %g, want %g", c.held, c.nHeld, c.val, c.nVal, got, c.want)
		}
	}
}

// With two bases of pure noise, the direct search fits the noise of its
// held-out sample: the learnt θ's held-out ADG is above either base
// alone's. The cross-fitted estimate scores θ on users it was not learnt
// on, so it has no such optimism: it is below the in-sample one and
// within noise of a base alone. Over five noise draws, as one draw's
// optimism (~0.004) is within a draw's noise.
func TestBlendStack_crossFitRemovesOptimism(t *testing.T) {
	x := generated(t, 21, 300, 150, 15)
	ctx := context.Background()
	ho, err := newHoldout(x, 0.2, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 5
	var alone, inSample, cross float64
	for d := range uint64(draws) {
		st, err := blendStackOf(ctx, ho, []recsys.Model{&noiseModel{n: x.Items(), stream: 2 * d}, &noiseModel{n: x.Items(), stream: 2*d + 1}}, 100, 1)
		if err != nil {
			t.Fatal(err)
		}
		o := (&Options{Iterations: 2000, Seed: 1}).withDefaults()
		learnt, _, err := st.learnDirect(ctx, o, []float64{1e-2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := st.adg(ctx, []float64{1, 0})
		b, _ := st.adg(ctx, []float64{0, 1})
		c, err := st.crossFitADG(ctx, o, []float64{1e-2})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("noise alone %.4f, %.4f; learnt θ %v in sample %.4f, cross-fitted %.4f", a, b, learnt.Theta, learnt.HeldOutADG, c)
		alone += max(a, b) / draws
		inSample += learnt.HeldOutADG / draws
		cross += c / draws
	}
	if inSample <= alone {
		t.Fatalf("the learnt θs' mean in-sample ADG %.4f is not above the better base's %.4f: nothing to correct", inSample, alone)
	}
	if cross >= inSample {
		t.Errorf("mean cross-fitted %.4f not below the in-sample %.4f", cross, inSample)
	}
	if cross > alone+0.005 {
		t.Errorf("mean cross-fitted %.4f above the better noise base's %.4f by more than 0.005", cross, alone)
	}
}

// Above blendStackUsers the stack holds out positives of userSample's
// users alone: the others' rows train the bases whole, and only the
// sample is stacked and drawn by OPT-ADG.
func TestBlendStack_sampledUsers(t *testing.T) {
	x := generated(t, 23, 120, 60, 8)
	defer func(n int) { blendStackUsers = n }(blendStackUsers)
	blendStackUsers = 30
	bo := BlendOptions{Bases: []string{"popular", "itemknn"}, Params: []recsys.Params{{}, {K: 10}}}
	st, err := newBlendStack(context.Background(), x, bo.Bases, bo.Params, bo, 5)
	if err != nil {
		t.Fatal(err)
	}
	sample := userSample(x.Users(), 30)
	in := map[int]bool{}
	for _, u := range sample {
		in[u] = true
	}
	held, stacked := 0, 0
	for u := range x.Users() {
		h := len(st.ts.pos[u])
		if !in[u] && (h > 0 || len(st.ts.blocks[u].items) > 0 || st.ts.x.UserCount(u) != x.UserCount(u)) {
			t.Fatalf("user %d outside the sample: %d held out, %d stacked, %d of %d positives in the bases' rows", u, h, len(st.ts.blocks[u].items), st.ts.x.UserCount(u), x.UserCount(u))
		}
		if in[u] {
			if h == 0 || st.ts.x.UserCount(u)+h != x.UserCount(u) {
				t.Fatalf("sampled user %d: %d held out, %d + %d of %d positives", u, h, st.ts.x.UserCount(u), h, x.UserCount(u))
			}
			held += h
			stacked++
		}
	}
	if len(st.ts.eligible) != stacked || stacked != 30 || held != st.heldOut() {
		t.Fatalf("%d eligible, %d stacked users, %d held out (stack: %d)", len(st.ts.eligible), stacked, held, st.heldOut())
	}
}

// adgSum counts, for every held-out positive, the sampled negatives
// strictly above it and half of those tied with it; against the definition (every pair compared) on a
// stack whose popular base ties many scores, for several θ, bit for bit
// (the same sums in the same order). Asked again, and on a subset of the
// users after the whole (its memo is the subset's own), it still agrees.
func TestBlendStack_adgSumMatchesPairwise(t *testing.T) {
	x := generated(t, 29, 200, 120, 12)
	ctx := context.Background()
	ho, err := newHoldout(x, 0.3, 4, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pop := fitted(t, "popular", ho.x, recsys.Params{})
	st, err := blendStackOf(ctx, ho, []recsys.Model{pop, &noiseModel{n: x.Items()}}, 40, 2)
	if err != nil {
		t.Fatal(err)
	}
	ties := 0
	pairwise := func(st *blendStack, theta []float64) (float64, int) {
		ts := st.ts
		want, wantN := 0.0, 0
		for _, u := range ts.eligible {
			b := &ts.blocks[u]
			scale := float64(ts.x.Items()-ts.x.UserCount(int(u))-len(st.posRows[u])) / float64(len(st.negRows[u]))
			sum := 0.0
			for _, q := range st.posRows[u] {
				sp := dot(theta, b.row(int(q), 2))
				above := 0.0
				for _, r := range st.negRows[u] {
					switch sn := dot(theta, b.row(int(r), 2)); {
					case sn > sp:
						above++
					case sn == sp:
						above += 0.5
						ties++
					}
				}
				sum += 1 / math.Log2(scale*above+2)
				wantN++
			}
			want += sum
		}
		return want, wantN
	}
	half := st.on(st.ts.eligible[:len(st.ts.eligible)/2])
	for _, theta := range [][]float64{{1, 0}, {0, 1}, {1, 0.25}, {-0.5, 1}} {
		for _, c := range []struct {
			name string
			st   *blendStack
		}{{"all", st}, {"all again", st}, {"half", half}} {
			want, wantN := pairwise(c.st, theta)
			got, n, err := c.st.adgSum(ctx, theta)
			if err != nil {
				t.Fatal(err)
			}
			if n != wantN || got != want {
				t.Errorf("%s, θ %v: adgSum %v over %d positives, pairwise %v over %d", c.name, theta, got, n, want, wantN)
			}
		}
	}
	if ties == 0 {
		t.Fatal("no positive tied with a negative: the test does not exercise ties")
	}
}

// Under θ = 0 every score is 0 and every sampled negative ties every
// positive, so each counts as half above it: a positive of user u ranks
// at (|O⁻u|)/2, the middle of a random order, and adg is the mean of
// 1/log2(|O⁻u|/2 + 2) over the positives, with |O⁻u| = |I| − |H_u| − |P_u|.
// Counting ties as below, it was 1 (every positive first).
func TestBlendStack_adgTiesCountHalf(t *testing.T) {
	x := generated(t, 31, 150, 90, 10)
	ctx := context.Background()
	ho, err := newHoldout(x, 0.3, 5, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := blendStackOf(ctx, ho, []recsys.Model{&noiseModel{n: x.Items()}}, 30, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, n := 0.0, 0
	for _, u := range st.ts.eligible {
		unseen := float64(x.Items() - ho.x.UserCount(int(u)) - len(st.posRows[u]))
		for range st.posRows[u] {
			want += 1 / math.Log2(unseen/2+2)
			n++
		}
	}
	got, err := st.adg(ctx, []float64{0})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || math.Abs(got-want/float64(n)) > 1e-12 {
		t.Fatalf("adg under θ = 0: %v, want %v over %d positives", got, want/float64(n), n)
	}
}

// The search's one pass over the validation users gives, for every θ, the
// validation ADG of the blend with that θ scored alone (modelValidationADG),
// bit for bit: one-hot θs, a mixed one, a negative weight, a zero weight
// and a base no θ uses. A user with no validation items counts for none.
func TestBlendValidationADGs_matchEachBlendAlone(t *testing.T) {
	all := generated(t, 31, 150, 90, 12)
	x, val := holdOut(t, all, 0.25, 4)
	val[3] = nil
	names := []string{"itemknn", "userknn", "popular"}
	bases := []recsys.Model{fitted(t, "itemknn", x, recsys.Params{K: 20}), fitted(t, "userknn", x, recsys.Params{K: 15}), fitted(t, "popular", x, recsys.Params{})}
	params := make([]recsys.Params, len(names))
	thetas := [][]float64{{1, 0, 0}, {0, 1, 0}, {0.7, 0.4, 0}, {0.5, -0.25, 0}, {1, 1, 0}}
	ctx := context.Background()
	got, ranks, err := blendValidationADGs(ctx, bases, thetas, x, val)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float64]bool{}
	for k, theta := range thetas {
		m := &Blend{}
		m.set(names, bases, params, theta, x.Items())
		want, err := modelValidationADG(ctx, m, x, val)
		if err != nil {
			t.Fatal(err)
		}
		if got[k] != want || want <= 0 {
			t.Errorf("θ %v: one pass %.17g, the blend alone %.17g", theta, got[k], want)
		}
		set := make([][]uint32, x.Users())
		copy(set, val)
		alone, _, err := recsys.RankHeldOut(ctx, m, x, x.Popularity(), [][][]uint32{set}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for u := range x.Users() {
			if !slices.Equal(ranks[k][u], alone[0][u]) {
				t.Fatalf("θ %v user %d: one pass ranks %v, the blend alone %v", theta, u, ranks[k][u], alone[0][u])
			}
		}
		seen[want] = true
	}
	if len(seen) < 3 {
		t.Errorf("the θs gave %d distinct validation ADGs: the case compares too little", len(seen))
	}
}

// With HeldOut and every base fitted on the matrix searched (a training
// job's validation split above ScalePositives), the search fits no base
// again: a base no registry can fit ("noise") is taken as it is, where
// the search without HeldOut must refit it on its own holdout and fails.
// The stack holds the given positives of the users without validation
// items, at most blendStackUsers of them, and every base's z-scores in a
// block are those of the fitted base itself.
func TestSearchBlend_heldOutTakesTheFittedBases(t *testing.T) {
	all := generated(t, 37, 160, 80, 12)
	x, held := holdOut(t, all, 0.2, 6)
	val := make([][]uint32, x.Users())
	for u := 0; u < x.Users(); u += 3 {
		val[u] = held[u] // the search's validation sample
	}
	ctx := context.Background()
	names := []string{"itemknn", "noise"}
	fits := []recsys.Model{fitted(t, "itemknn", x, recsys.Params{K: 20}), &noiseModel{n: x.Items()}}
	bo := BlendOptions{Bases: names, Params: []recsys.Params{{K: 20}, {}}, Fitted: fits, FittedOn: x, HeldOut: held}
	p := recsys.Params{Options: &Options{Blend: &bo, Iterations: 2000, Seed: 3}}
	g := recsys.Grid{K: []int{20}, Lambda: []float64{1e-3}}
	c := recsys.Caps{Items: x.Items(), Users: x.Users() - 1}
	if _, err := searchBlend(ctx, x, val, g, c, p, nil); err != nil {
		t.Fatalf("with HeldOut: %v", err)
	}
	own := bo
	own.HeldOut = nil
	if _, err := searchBlend(ctx, x, val, g, c, recsys.Params{Options: &Options{Blend: &own, Iterations: 2000, Seed: 3}}, nil); err == nil {
		t.Fatal("without HeldOut the search refitted a base no registry has")
	}

	defer func(n int) { blendStackUsers = n }(blendStackUsers)
	blendStackUsers = 40
	ho := bo.heldOut(x, len(names), val)
	if ho == nil || ho.x != x {
		t.Fatal("no holdout of the given positives on the searched matrix")
	}
	stacked := 0
	for u := range x.Users() {
		switch {
		case len(ho.pos[u]) == 0:
		case len(val[u]) > 0:
			t.Fatalf("user %d of the validation sample is stacked", u)
		case !slices.Equal(ho.pos[u], held[u]):
			t.Fatalf("user %d: stacked %v, held out %v", u, ho.pos[u], held[u])
		default:
			stacked++
		}
	}
	if stacked != 40 {
		t.Fatalf("%d users stacked, want blendStackUsers = 40 of the %d without validation items", stacked, x.Users()-len(val)/3)
	}
	st, err := blendStackOf(ctx, ho, fits, 30, 3)
	if err != nil {
		t.Fatal(err)
	}
	raw, z := make([]float64, x.Items()), make([]float64, x.Items())
	mark := make([]bool, x.Items())
	for _, u := range st.ts.eligible[:5] {
		hist := x.Row(int(u))
		markHistory(mark, hist, true)
		zscoreBase(fits[0], int(u), hist, mark, raw, z)
		markHistory(mark, hist, false)
		blk := &st.ts.blocks[u]
		for r, i := range blk.items {
			if got := blk.row(r, 2)[0]; got != z[i] {
				t.Fatalf("user %d item %d: stacked z-score %v, the fitted base's %v", u, i, got, z[i])
			}
		}
	}
	// A base not fitted on the matrix searched: the search holds out its own.
	part := bo
	part.Fitted = []recsys.Model{fits[0], nil}
	if part.heldOut(x, len(names), val) != nil {
		t.Fatal("a holdout of the given positives with a base to fit")
	}
}

// countBelow counts the scores strictly below s, as a scan does: every
// length up to 40, with repeated scores and s equal to, between, below and
// above them.
func TestCountBelow_isTheScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for n := range 41 {
		ps := make([]float64, n)
		for j := range ps {
			ps[j] = float64(rng.IntN(12))
		}
		slices.Sort(ps)
		for s := -1.0; s <= 13; s += 0.5 {
			want := 0
			for _, p := range ps {
				if p < s {
					want++
				}
			}
			if got := countBelow(ps, s); got != want {
				t.Fatalf("%v below %g: %d, want %d", ps, s, got, want)
			}
		}
	}
}
