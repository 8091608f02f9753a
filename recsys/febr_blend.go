package recsys

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"recsys/recsys/metrics"
)

// BlendModel is the registry name of the learnt blend: FEBR's linear
// ranker (dissertation §4.5) over the per-user z-scored scores of several
// base models, θ learnt by OPT-ADG (Algorithm 4.2) on held-out positives.
const BlendModel = "febr-blend"

// DefaultBlendBases are the base models of febr-blend that are registered
// (the matrix factorisation lives in recsys/mf and registers itself);
// popular lets the blend correct the others' popularity bias. ials is the
// best single model on Last.fm (README "febr-blend"), so it is a base;
// wrmf stays, as a base the direct search can weigh 0 (issue 17).
var DefaultBlendBases = []string{"popular", "kunn", "slim", "ease", "rp3beta", "wrmf", "ials"}

// Defaults of BlendOptions.
const (
	DefaultBlendHoldout   = 0.2
	DefaultBlendNegatives = 1000
)

// blendStackUsers bounds the users θ is learnt on: above it, a fixed-seed
// uniform sample of that many (userSample) has a share of its positives
// held out and its blocks stacked, the other users' rows training the
// bases whole. Every user's block holds ~1,000 sampled negatives' scores
// by every base (56 KB for seven): with all of MovieLens-20M's 142k users
// stacked, an auto run passed 20 GB resident in this stage. 10,000 users'
// ~290,000 held-out positives are ample for seven weights. A variable so that tests can exercise it.
var blendStackUsers = 10_000

// DefaultBlendLambdas is the λ grid of the blend's search.
var DefaultBlendLambdas = []float64{1e-4, 1e-2}

// BlendOptions configure febr-blend (FEBROptions.Blend); the other
// FEBROptions (λ, η, γ, Iterations, Seed) apply to its OPT-ADG run.
type BlendOptions struct {
	// Bases are the registry names of the base models (nil: the
	// registered ones of DefaultBlendBases); Params their parameters, in
	// the same order (missing ones take the defaults).
	Bases  []string
	Params []Params
	// Theta, when it has one weight per base, is used as it is: Fit fits
	// the bases and learns nothing (a search's refit).
	Theta []float64
	// Holdout is the share of every user's positives θ is learnt on, the
	// bases being fitted on the rest (0: DefaultBlendHoldout).
	Holdout float64
	// Negatives is the size of the uniform sample of every user's
	// negatives OPT-ADG draws from (0: DefaultBlendNegatives).
	Negatives int
	// Fitted, when FittedOn is the matrix being searched or fitted, holds
	// bases already fitted on it with their Params, in Bases' order (a nil
	// entry: not fitted): the search takes such a base as chosen instead
	// of searching its grid, and Fit instead of fitting it again. A
	// training job passes the bases it tuned and refitted itself.
	Fitted   []Model
	FittedOn *Matrix
	// HeldOut, when every base is Fitted on the matrix searched, are
	// positives held out of that matrix per user (a training job's
	// validation split): the search learns θ on them instead of refitting
	// every base on the matrix less a holdout of its own (newBlendStack),
	// the bases' scores of them being those of fits that never saw them
	// either way. The users with validation items in the search are left
	// out, so that the validation ADG stays a measure on items θ was not
	// learnt on.
	HeldOut [][]uint32
	// Search, when not nil, chooses a base's parameters on the matrix
	// searched instead of its grid alone (searchBase): recsys/eval passes
	// its Tune, which extends a grid dimension past the end the choice sits
	// at, so that each base is searched as the model alone is (issue 17).
	Search BaseSearch
}

// BaseSearch chooses the parameters of base name on x by the validation
// ADG of val (the users' rows of x as histories), on the grid g capped by
// c, and returns the chosen base fitted on x. onFit, when not nil, is
// called after every fit.
type BaseSearch func(ctx context.Context, x *Matrix, val [][]uint32, name string, g Grid, c Caps, cache *NeighbourCache, onFit func()) (Model, Params, error)

// fitted is base b when it was fitted on x (BlendOptions.Fitted), else nil.
func (o *BlendOptions) fitted(x *Matrix, b int) Model {
	if o.FittedOn != x || b >= len(o.Fitted) || b >= len(o.Params) {
		return nil
	}
	return o.Fitted[b]
}

func init() {
	Register(BlendModel, Kind{New: func() Model { return &Blend{} }, Candidates: blendCandidates, Search: searchBlend,
		Reuses: DefaultBlendBases, Service: Service{Auto: true}})
}

// Blend is febr-blend: f_θ(u, i) = Σ_b θ_b z_b(u, i), where z_b(u, i) is
// base b's score of i for u's live history, z-scored over the items not
// in the history (so that the bases' scales, which differ by orders of
// magnitude and from user to user, do not weigh in θ).
type Blend struct {
	names  []string
	bases  []Model
	theta  []float64
	params []Params
	nItems int
	info   BlendInfo
}

// BlendInfo describes a blend fit.
type BlendInfo struct {
	// Learnt is false when θ was given (BlendOptions.Theta).
	Learnt bool
	// Updates is the number of OPT-ADG steps on a violator, of Iterations.
	Updates, Iterations int
	// Users and Pairs are the held-out training users and (u, i) pairs
	// (positives and sampled negatives) θ was learnt on.
	Users, Pairs int
	// BaseSeconds times the base fits on the training matrix,
	// StackSeconds the held-out fits, features and OPT-ADG.
	BaseSeconds, StackSeconds float64
	// Trials are the θ a search compared on the validation items.
	Trials []BlendTrial
}

// BlendTrial is one θ of a blend search: Label is "opt-adg λ=…", "direct"
// (blendStack.ascend) or a base's name (that base alone); HeldOutADG is
// its ADG estimate on the held-out items θ was learnt on, ValidationADG
// its validation ADG (0 for the OPT-ADG θ, which are not candidates).
type BlendTrial struct {
	Label                     string
	Theta                     []float64
	HeldOutADG, ValidationADG float64
	// CrossFitADG is the held-out ADG the choice counts (the learnt θ's
	// cross-fitted, crossFitADG; a base alone's HeldOutADG) and PooledADG
	// the criterion of the choice (pooledADG); 0 for the OPT-ADG θ.
	CrossFitADG, PooledADG float64
}

func (m *Blend) Name() string { return BlendModel }

// Info describes the last fit (zero after UnmarshalBinary).
func (m *Blend) Info() BlendInfo { return m.info }

// Theta returns a copy of the learnt weights, one per base (Bases).
func (m *Blend) Theta() []float64 { return slices.Clone(m.theta) }

// WithTheta returns the blend of the same fitted bases with other weights
// (one per base), for reports comparing weights on the same fits.
func (m *Blend) WithTheta(theta []float64) (*Blend, error) {
	if len(theta) != len(m.bases) {
		return nil, fmt.Errorf("recsys: %d weights for %d bases", len(theta), len(m.bases))
	}
	out := &Blend{}
	out.set(m.names, m.bases, m.params, slices.Clone(theta), m.nItems)
	return out, nil
}

// Bases returns the base model names, in the order of Theta.
func (m *Blend) Bases() []string { return slices.Clone(m.names) }

// Base is base b's fitted model and parameters.
func (m *Blend) Base(b int) (Model, Params) { return m.bases[b], m.params[b] }

// BlendBases are the base models febr-blend uses when its options name
// none: the registered ones of DefaultBlendBases.
func BlendBases() []string { return blendBases(nil) }

func blendBases(o *BlendOptions) []string {
	if o != nil && len(o.Bases) > 0 {
		return o.Bases
	}
	var out []string
	for _, n := range DefaultBlendBases {
		if _, err := KindOf(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// fitBases fits every base on x with its parameters (cache, when not nil,
// is x's neighbour cache), taking those of bo fitted on x as they are (bo
// nil: none).
func fitBases(ctx context.Context, x *Matrix, names []string, params []Params, bo *BlendOptions, cache *NeighbourCache, progress ProgressFunc) ([]Model, error) {
	out := make([]Model, len(names))
	for b, name := range names {
		if name == BlendModel || IsFEBR(name) {
			return nil, fmt.Errorf("recsys: %s cannot be a base of %s", name, BlendModel)
		}
		if bo != nil {
			if out[b] = bo.fitted(x, b); out[b] != nil {
				continue
			}
		}
		m, err := New(name)
		if err != nil {
			return nil, err
		}
		var p Params
		if b < len(params) {
			p = params[b]
		}
		p.Cache, p.Init, p.Progress = cache, nil, progress
		if err := m.Fit(ctx, x, p); err != nil {
			return nil, fmt.Errorf("recsys: %s base %s: %w", BlendModel, name, err)
		}
		out[b] = m
	}
	return out, nil
}

// blendSetup is p's FEBR options, blend options and base names.
func blendSetup(p Params) (FEBROptions, BlendOptions, []string, error) {
	o := p.febrOptions()
	var bo BlendOptions
	if o.Blend != nil {
		bo = *o.Blend
	}
	names := blendBases(&bo)
	if len(names) == 0 {
		return o, bo, nil, fmt.Errorf("recsys: %s has no base model", BlendModel)
	}
	return o, bo, names, nil
}

func (m *Blend) Fit(ctx context.Context, x *Matrix, p Params) error {
	o, bo, names, err := blendSetup(p)
	if err != nil {
		return err
	}
	params := make([]Params, len(names))
	copy(params, bo.Params)
	info := BlendInfo{}
	theta := bo.Theta
	if len(theta) != len(names) {
		start := time.Now()
		st, err := newBlendStack(ctx, x, names, params, bo, o.Seed)
		if err != nil {
			return err
		}
		res, err := st.learn(ctx, o)
		if err != nil {
			return err
		}
		theta = res.theta
		info = BlendInfo{Learnt: true, Updates: res.updates, Iterations: res.iterations, Users: len(st.ts.eligible),
			Pairs: st.pairs, StackSeconds: time.Since(start).Seconds()}
	}
	start := time.Now()
	bases, err := fitBases(ctx, x, names, params, &bo, p.Cache, p.Progress)
	if err != nil {
		return err
	}
	info.BaseSeconds = time.Since(start).Seconds()
	m.set(names, bases, params, slices.Clone(theta), x.Items())
	m.info = info
	return nil
}

func (m *Blend) set(names []string, bases []Model, params []Params, theta []float64, nItems int) {
	m.names, m.bases, m.theta, m.nItems = names, bases, theta, nItems
	m.params = make([]Params, len(params))
	for b, p := range params {
		m.params[b] = Params{K: p.K, L1: p.L1, L2: p.L2, Extra: p.Extra}
	}
}

// blendScratch is one scorer's buffers.
type blendScratch struct {
	base []float64
	hist []bool
}

var blendPool sync.Pool

// zscoreBase writes base's per-user z-scored scores for history into z
// (len m.nItems): z-scored over the items not in the history (mark), 0
// for every item when the scores do not vary there.
func zscoreBase(base Model, self int, history []uint32, mark []bool, raw, z []float64) {
	mean, inv := zscoreStats(base, self, history, mark, raw)
	for i, s := range raw {
		z[i] = (s - mean) * inv
	}
}

// zscoreStats scores base for history into raw and returns the mean and
// the inverse standard deviation of the scores over the items not in the
// history (mark); inv is 0 when they do not vary there.
func zscoreStats(base Model, self int, history []uint32, mark []bool, raw []float64) (mean, inv float64) {
	ScoreUser(base, self, history, raw)
	n, sum, sq := 0.0, 0.0, 0.0
	for i, s := range raw {
		if !mark[i] {
			n++
			sum += s
			sq += s * s
		}
	}
	if n > 0 {
		mean = sum / n
		if v := sq/n - mean*mean; v > 1e-24*max(1, sq/n) {
			inv = 1 / math.Sqrt(v)
		}
	}
	return mean, inv
}

func (m *Blend) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

// ScoreUser fills Σ_b θ_b z_b(u, i) (self as in UserScorer), adding each
// base's z-scores as they are computed.
func (m *Blend) ScoreUser(self int, history []uint32, scores []float64) {
	fill(scores, m.nItems, func(buf []float64) {
		sc, _ := blendPool.Get().(*blendScratch)
		if sc == nil || len(sc.base) != m.nItems {
			sc = &blendScratch{base: make([]float64, m.nItems), hist: make([]bool, m.nItems)}
		}
		defer blendPool.Put(sc)
		markHistory(sc.hist, history, true)
		for b, base := range m.bases {
			t := m.theta[b]
			if t == 0 {
				continue
			}
			mean, inv := zscoreStats(base, self, history, sc.hist, sc.base)
			for i, s := range sc.base {
				buf[i] += t * ((s - mean) * inv)
			}
		}
		markHistory(sc.hist, history, false)
	})
}

func markHistory(mark []bool, history []uint32, v bool) {
	for _, i := range history {
		if int(i) < len(mark) {
			mark[i] = v
		}
	}
}

// leader is the base with the largest weight that implements T.
func leader[T any](m *Blend) (T, bool) {
	var best T
	found, w := false, math.Inf(-1)
	for b, base := range m.bases {
		if t, ok := base.(T); ok && m.theta[b] > w {
			best, found, w = t, true, m.theta[b]
		}
	}
	return best, found
}

// Explain implements Explainer with the explanation of the most weighted
// base model that explains (nil when none does).
func (m *Blend) Explain(history []uint32, items []uint32, n int) [][]Contribution {
	if ex, ok := leader[Explainer](m); ok {
		return ex.Explain(history, items, n)
	}
	return make([][]Contribution, len(items))
}

// Similar implements ItemNeighbourhood with the item lists of the most
// weighted base model that keeps them.
func (m *Blend) Similar(item uint32) []Neighbour {
	if nb, ok := leader[ItemNeighbourhood](m); ok {
		return nb.Similar(item)
	}
	return nil
}

// Params reports θ ("w.<base>") and every base's parameters
// ("<base>.<name>").
func (m *Blend) Params() map[string]float64 {
	out := map[string]float64{}
	for b, name := range m.names {
		out["w."+name] = m.theta[b]
		for k, v := range ParamsOf(m.bases[b]) {
			out[name+"."+k] = v
		}
	}
	return out
}

// MarshalBinary writes θ, every base's parameters and every base model.
func (m *Blend) MarshalBinary() ([]byte, error) {
	if m.bases == nil {
		return nil, fmt.Errorf("recsys: %s is not fitted", BlendModel)
	}
	e := newEncoder(BlendModel)
	e.Uvarint(uint64(m.nItems))
	e.Uvarint(uint64(len(m.bases)))
	for b, base := range m.bases {
		blob, err := base.MarshalBinary()
		if err != nil {
			return nil, err
		}
		p := m.params[b]
		e.Float64(m.theta[b])
		e.Uvarint(uint64(p.K))
		e.Float64(p.L1)
		e.Float64(p.L2)
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range p.Extra {
				if !yield(k) {
					return
				}
			}
		})
		e.Uvarint(uint64(len(keys)))
		for _, k := range keys {
			e.Str(k)
			e.Float64(p.Extra[k])
		}
		e.Uvarint(uint64(len(blob)))
		e.Raw(blob)
	}
	return e.Bytes(), nil
}

func (m *Blend) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, BlendModel)
	nItems := d.Bounded(1 << 32)
	n := d.Bounded(64)
	var (
		names  []string
		bases  []Model
		theta  []float64
		params []Params
	)
	for range n {
		if d.Err() != nil {
			break
		}
		w := d.Finite()
		p := Params{K: d.Bounded(1 << 32), L1: d.Finite(), L2: d.Finite()}
		for range d.Bounded(64) {
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			k := d.Str()
			p.Extra[k] = d.Finite()
		}
		blob := d.Raw(d.Count(1))
		if d.Err() != nil {
			break
		}
		base, err := Load(blob)
		if err != nil {
			return err
		}
		if base.Name() == BlendModel {
			return errCorrupt
		}
		names, bases, theta, params = append(names, base.Name()), append(bases, base), append(theta, w), append(params, p)
	}
	if err := d.Finish(); err != nil {
		return err
	}
	if n == 0 {
		return errCorrupt
	}
	m.set(names, bases, params, theta, nItems)
	m.info = BlendInfo{}
	return nil
}

// blendStack is the stacking data of a blend fit: the bases fitted on the
// training matrix less a held-out share of every user's positives, and,
// per user, the z-scored base scores of the held-out positives and of a
// uniform sample of the negatives, as OPT-ADG blocks.
type blendStack struct {
	ts    *febrTrainSet
	pairs int
	// posRows[u] and negRows[u] are the rows of user u's block holding
	// its held-out positives and its sampled negatives.
	posRows, negRows [][]int32
	// seen memoises adgSum by θ: the direct search comes back to θ it
	// evaluated (a fifth of its calls on generated data).
	seen *adgMemo
}

// adgMemo is adgSum's results by θ (its bits), for one set of users.
type adgMemo struct {
	mu sync.Mutex
	m  map[string]adgResult
}

type adgResult struct {
	sum float64
	n   int
}

// key is θ's bits as a map key.
func (*adgMemo) key(theta []float64) string {
	b := make([]byte, 0, 8*len(theta))
	for _, v := range theta {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return string(b)
}

func (m *adgMemo) get(theta []float64) (adgResult, bool) {
	if m == nil {
		return adgResult{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.m[m.key(theta)]
	return r, ok
}

func (m *adgMemo) put(theta []float64, r adgResult) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]adgResult{}
	}
	m.m[m.key(theta)] = r
}

// newBlendStack fits the bases on x less the holdout and builds the
// blocks θ is learnt from: the scores of the held-out items come from
// bases that never saw them, as at test time.
func newBlendStack(ctx context.Context, x *Matrix, names []string, params []Params, bo BlendOptions, seed uint64) (*blendStack, error) {
	share := bo.Holdout
	if share <= 0 {
		share = DefaultBlendHoldout
	}
	nNeg := negatives(bo)
	var users []int // nil: every user
	if x.Users() > blendStackUsers {
		users = userSample(x.Users(), blendStackUsers)
	}
	ho, err := newFEBRHoldout(x, share, seed, nil, users)
	if err != nil {
		return nil, err
	}
	bases, err := fitBases(ctx, ho.x, names, params, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	return blendStackOf(ctx, ho, bases, nNeg, seed)
}

// negatives is bo.Negatives with its default.
func negatives(bo BlendOptions) int {
	if bo.Negatives <= 0 {
		return DefaultBlendNegatives
	}
	return bo.Negatives
}

// heldOut is the holdout of a search on x that takes its positives from
// o.HeldOut (BlendOptions.HeldOut): those of the users without validation
// items in val, at most blendStackUsers of them (a fixed-seed sample, as
// newBlendStack's), with x as the histories. It is nil, and the search
// holds out its own, unless every one of the nb bases was fitted on x.
func (o *BlendOptions) heldOut(x *Matrix, nb int, val [][]uint32) *febrHoldout {
	if o.HeldOut == nil {
		return nil
	}
	for b := range nb {
		if o.fitted(x, b) == nil {
			return nil
		}
	}
	var users []int
	for u := range min(x.Users(), len(o.HeldOut)) {
		if len(o.HeldOut[u]) > 0 && (u >= len(val) || len(val[u]) == 0) {
			users = append(users, u)
		}
	}
	if len(users) > blendStackUsers {
		keep := userSample(len(users), blendStackUsers)
		for k, at := range keep {
			users[k] = users[at]
		}
		users = users[:len(keep)]
	}
	ho := &febrHoldout{x: x, pos: make([][]uint32, x.Users())}
	for _, u := range users {
		ho.pos[u] = slices.Sorted(slices.Values(o.HeldOut[u]))
	}
	return ho
}

// blendStackOf builds the blocks from bases fitted on ho.x.
func blendStackOf(ctx context.Context, ho *febrHoldout, bases []Model, nNeg int, seed uint64) (*blendStack, error) {
	x := ho.x
	dim := len(bases)
	ext := &febrExtractor{nItems: x.Items(), dim: dim}
	ts := &febrTrainSet{x: x, ext: ext, pos: ho.pos, zMiss: make([]float64, dim), blocks: make([]febrBlock, x.Users()),
		sampled: make([][]uint32, x.Users())}
	st := &blendStack{ts: ts, posRows: make([][]int32, x.Users()), negRows: make([][]int32, x.Users()), seen: &adgMemo{}}
	err := ParallelFor(ctx, x.Users(), 8, "", nil, func() func(lo, hi int) {
		raw := make([]float64, x.Items())
		mark := make([]bool, x.Items())
		z := make([][]float64, dim)
		for b := range z {
			z[b] = make([]float64, x.Items())
		}
		var cand []uint32
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				hist, pos := x.Row(u), ho.pos[u]
				if len(pos) == 0 {
					continue
				}
				markHistory(mark, hist, true)
				markHistory(mark, pos, true)
				// A uniform sample of the negatives, drawn per user from
				// its own seed so that it does not depend on the schedule.
				rng := rand.New(rand.NewPCG(seed, uint64(u)))
				cand = cand[:0]
				for i := range x.Items() {
					if !mark[i] {
						cand = append(cand, uint32(i))
					}
				}
				if len(cand) > nNeg {
					for k := range nNeg {
						j := k + rng.IntN(len(cand)-k)
						cand[k], cand[j] = cand[j], cand[k]
					}
					cand = cand[:nNeg]
				}
				markHistory(mark, pos, false)
				for b, base := range bases {
					zscoreBase(base, u, hist, mark, raw, z[b])
				}
				markHistory(mark, hist, false)
				blk := &ts.blocks[u]
				blk.items = append(slices.Clone(pos), cand...)
				slices.Sort(blk.items)
				blk.feat = make([]float64, 0, len(blk.items)*dim)
				for _, i := range blk.items {
					for b := range dim {
						blk.feat = append(blk.feat, z[b][i])
					}
				}
				// Every negative OPT-ADG draws comes from the sample.
				ts.sampled[u] = slices.Clone(cand)
				st.posRows[u], st.negRows[u] = blockRows(blk.items, pos)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for u := range x.Users() {
		st.pairs += len(ts.blocks[u].items)
		if len(st.posRows[u]) > 0 && len(st.negRows[u]) > 0 {
			ts.eligible = append(ts.eligible, int32(u))
		}
	}
	return st, nil
}

// learn runs OPT-ADG on the stack from the best single base (θ = 1 on
// the base whose held-out ADG is highest), for o.Iterations iterations
// (averaged SGD, febrTrainSet.optADG), with o's λ, η, γ and seed.
func (st *blendStack) learn(ctx context.Context, o FEBROptions) (optResult, error) {
	o.Validation = nil
	theta0, err := st.bestSingle(ctx)
	if err != nil {
		return optResult{}, err
	}
	return st.ts.optADG(ctx, theta0, o.optConfig(nil), nil)
}

// bestSingle is the one-hot θ of the base whose held-out ADG on the
// stack's sample is highest.
func (st *blendStack) bestSingle(ctx context.Context) ([]float64, error) {
	dim := st.ts.ext.dim
	best, bestADG := make([]float64, dim), -1.0
	for b := range dim {
		theta := make([]float64, dim)
		theta[b] = 1
		adg, err := st.adg(ctx, theta)
		if err != nil {
			return nil, err
		}
		if adg > bestADG {
			best, bestADG = theta, adg
		}
	}
	return best, nil
}

// adg is the mean ADG of the held-out positives under θ among the
// sampled negatives, the rank scaled to the whole of O⁻u (an unbiased
// estimate of each positive's rank).
func (st *blendStack) adg(ctx context.Context, theta []float64) (float64, error) {
	sum, n, err := st.adgSum(ctx, theta)
	if n == 0 {
		return 0, err
	}
	return sum / float64(n), err
}

// adgSum is adg's sum over the held-out positives and their number. Per
// user the few positives' scores are sorted, every negative finds by
// binary search how many positives it is strictly above, and a suffix sum
// turns those counts into each positive's negatives above it: the
// ascent's hundreds of calls sort ~30 scores a user instead of ~1,000
// (the whole auto run's largest stage at 20M sorted the negatives).
func (st *blendStack) adgSum(ctx context.Context, theta []float64) (float64, int, error) {
	if r, ok := st.seen.get(theta); ok {
		return r.sum, r.n, nil
	}
	ts := st.ts
	dim := ts.ext.dim
	sums := make([]float64, len(ts.eligible))
	counts := make([]int, len(ts.eligible))
	err := ParallelFor(ctx, len(ts.eligible), 64, "", nil, func() func(lo, hi int) {
		var (
			pos   []scoredRow // a user's positives, by score
			above []int       // negatives above pos[j-1] alone, then above it
			byRow []int       // negatives above posRows[j]
			ps    []float64   // pos's scores
		)
		return func(lo, hi int) {
			for k := lo; k < hi; k++ {
				u := int(ts.eligible[k])
				b := &ts.blocks[u]
				posRows, negRows := st.posRows[u], st.negRows[u]
				scale := float64(ts.x.Items()-ts.x.UserCount(u)-len(posRows)) / float64(len(negRows))
				pos = pos[:0]
				for j, q := range posRows {
					pos = append(pos, scoredRow{dot(theta, b.row(int(q), dim)), j})
				}
				slices.SortFunc(pos, func(a, b scoredRow) int { return cmp.Compare(a.score, b.score) })
				ps = ps[:0]
				for _, p := range pos {
					ps = append(ps, p.score)
				}
				above = slices.Grow(above[:0], len(pos)+1)[:len(pos)+1]
				clear(above)
				for _, r := range negRows {
					above[countBelow(ps, dot(theta, b.row(int(r), dim)))]++
				}
				// above[j+1] becomes the negatives above pos[j]: those
				// above more than j positives.
				n := 0
				for j := len(pos); j > 0; j-- {
					n += above[j]
					above[j] = n
				}
				byRow = slices.Grow(byRow[:0], len(pos))[:len(pos)]
				for j := range pos {
					byRow[pos[j].row] = above[j+1]
				}
				// Summed in the positives' own order, as before the sort.
				for _, c := range byRow {
					sums[k] += 1 / math.Log2(scale*float64(c)+2)
					counts[k]++
				}
			}
		}
	})
	if err != nil {
		return 0, 0, err
	}
	sum, n := 0.0, 0
	for k := range sums {
		sum += sums[k]
		n += counts[k]
	}
	st.seen.put(theta, adgResult{sum, n})
	return sum, n, nil
}

// countBelow is the number of the ascending scores ps strictly below s: a
// lower bound by halving, written out so that it inlines (adgSum calls it
// for every sampled negative).
func countBelow(ps []float64, s float64) int {
	lo, n := 0, len(ps)
	for n > 0 {
		half := n / 2
		if ps[lo+half] < s {
			lo += half + 1
			n -= half + 1
		} else {
			n = half
		}
	}
	return lo
}

// scoredRow is a positive's score and its index among the user's posRows.
type scoredRow struct {
	score float64
	row   int
}

// heldOut is the number of held-out positives adg averages over.
func (st *blendStack) heldOut() int {
	n := 0
	for _, u := range st.ts.eligible {
		n += len(st.posRows[u])
	}
	return n
}

// on is the stack restricted to the users given (a subset of eligible,
// ascending): OPT-ADG samples and adg averages over them only.
func (st *blendStack) on(users []int32) *blendStack {
	ts := *st.ts
	ts.eligible = users
	out := *st
	out.ts = &ts
	out.seen = &adgMemo{} // other users: other sums
	return &out
}

// ascend maximises the held-out ADG estimate (adg) over θ directly by
// coordinate ascent from theta0: every weight in turn moves by ±step while
// that raises the estimate, the step halving after a round without a
// move, until it is below minStep or rounds run out. The ADG is a step
// function of θ, which a gradient cannot follow; with one weight per base
// (a handful) the search is cheap. It is the listwise alternative to
// OPT-ADG's surrogate (README, "FEBR over several affinities").
func (st *blendStack) ascend(ctx context.Context, theta0 []float64) ([]float64, float64, error) {
	theta := slices.Clone(theta0)
	cur, err := st.adg(ctx, theta)
	if err != nil {
		return nil, 0, err
	}
	const minStep, rounds = 0.02, 40
	step := 0.5
	for r := 0; r < rounds && step >= minStep; r++ {
		moved := false
		for b := range theta {
			for _, sign := range []float64{1, -1} {
				try := slices.Clone(theta)
				try[b] += sign * step
				adg, err := st.adg(ctx, try)
				if err != nil {
					return nil, 0, err
				}
				if adg > cur {
					theta, cur, moved = try, adg, true
					break
				}
			}
		}
		if !moved {
			step /= 2
		}
	}
	return theta, cur, nil
}

// blendCandidates lists the fits of the blend's search: every base's own
// candidates, then one OPT-ADG run per λ.
func blendCandidates(g Grid, c Caps) []Params {
	var out []Params
	for _, name := range blendBases(nil) {
		if k, err := KindOf(name); err == nil && k.Candidates != nil {
			out = append(out, k.Candidates(g, c)...)
		}
	}
	for _, l := range blendLambdas(g) {
		out = append(out, Params{FEBR: &FEBROptions{Lambda: l}})
	}
	return out
}

func blendLambdas(g Grid) []float64 {
	if len(g.Lambda) > 0 {
		return g.Lambda
	}
	return DefaultBlendLambdas
}

// searchBlend is febr-blend's search on x: (1) every base's grid, each
// chosen by its validation ADG as recsys/eval's Tune chooses (bo.Search);
// (2) the chosen bases refitted on x less a held-out share of every
// user's positives, θ learnt on the held-out items (learnDirect); (3)
// between that θ and the one-hot θ of every base alone, the one with the
// highest ADG over all the held-out evidence (pooledADG): the held-out
// positives, the learnt θ's estimate there cross-fitted (crossFitADG) so
// that it is not scored on the items it was fitted on, and the validation
// positives.
func searchBlend(ctx context.Context, x *Matrix, val [][]uint32, g Grid, c Caps, p Params, onFit func()) (Choice, error) {
	o, bo, names, err := blendSetup(p)
	if err != nil {
		return Choice{}, err
	}
	params := make([]Params, len(names))
	onX := make([]Model, len(names))
	for b, name := range names {
		if m := bo.fitted(x, b); m != nil {
			onX[b], params[b] = m, bo.Params[b]
			continue
		}
		search := searchBase
		if bo.Search != nil {
			search = bo.Search
		}
		m, bp, err := search(ctx, x, val, name, g, c, p.Cache, onFit)
		if err != nil {
			return Choice{}, err
		}
		onX[b], params[b] = m, bp
	}
	var st *blendStack
	if held := bo.heldOut(x, len(names), val); held != nil {
		st, err = blendStackOf(ctx, held, onX, negatives(bo), o.Seed)
	} else {
		st, err = newBlendStack(ctx, x, names, params, bo, o.Seed)
	}
	if err != nil {
		return Choice{}, err
	}
	lambdas := blendLambdas(g)
	learnt, trials, err := st.learnDirect(ctx, o, lambdas, onFit)
	if err != nil {
		return Choice{}, err
	}
	cross, err := st.crossFitADG(ctx, o, lambdas)
	if err != nil {
		return Choice{}, err
	}
	nHeld := st.heldOut()
	nVal := 0
	for u := range min(len(val), x.Users()) {
		nVal += len(val[u])
	}
	// The choice: the learnt θ or a base alone.
	chosen := []BlendTrial{learnt}
	for b, name := range names {
		t := make([]float64, len(names))
		t[b] = 1
		adg, err := st.adg(ctx, t)
		if err != nil {
			return Choice{}, err
		}
		chosen = append(chosen, BlendTrial{Label: name, Theta: t, HeldOutADG: adg, CrossFitADG: adg})
	}
	chosen[0].CrossFitADG = cross
	thetas := make([][]float64, len(chosen))
	for k := range chosen {
		thetas[k] = chosen[k].Theta
	}
	vals, ranks, err := blendValidationADGs(ctx, onX, thetas, x, val)
	if err != nil {
		return Choice{}, err
	}
	var (
		best      *Blend
		bestADG   = math.Inf(-1)
		bestVal   float64
		bestRanks [][]int
	)
	for k := range chosen {
		tr := &chosen[k]
		m := &Blend{}
		m.set(names, onX, params, tr.Theta, x.Items())
		tr.ValidationADG = vals[k]
		tr.PooledADG = pooledADG(tr.CrossFitADG, nHeld, tr.ValidationADG, nVal)
		if tr.PooledADG > bestADG {
			best, bestADG, bestVal, bestRanks = m, tr.PooledADG, tr.ValidationADG, ranks[k]
		}
	}
	trials = append(trials, chosen...)
	best.info.Trials = trials
	fixed := o
	fixed.Validation, fixed.SLIM = nil, nil
	fixed.Blend = &BlendOptions{Bases: names, Params: best.params, Theta: best.theta}
	refit := Params{FEBR: &fixed}
	return Choice{Model: best, Params: refit, Refit: refit, ValidationADG: bestVal, ValidationRanks: bestRanks}, nil
}

// blendValidationADGs is modelValidationADG of the blend of bases under
// each θ of thetas, in one pass over the validation users: each base's
// z-scores of a user are computed once for every θ (the search compares
// its learnt θ with each base alone, eight blends of the same seven fits,
// and at 20M events scoring the bases is most of a validation pass). The
// scores are summed in Blend.ScoreUser's order, so every mean is the one
// modelValidationADG gives, bit for bit. ranks[k][u] are user u's
// validation ranks under thetas[k], RankHeldOut's.
func blendValidationADGs(ctx context.Context, bases []Model, thetas [][]float64, x *Matrix, val [][]uint32) (adg []float64, ranks [][][]int, err error) {
	nu, ni := x.Users(), x.Items()
	used := make([]bool, len(bases))
	for _, theta := range thetas {
		for b, w := range theta {
			used[b] = used[b] || w != 0
		}
	}
	// adgs[k][u] is user u's ADG under thetas[k], summed in user order
	// below as modelValidationADG sums its ranks.
	adgs := make([][]float64, len(thetas))
	ranks = make([][][]int, len(thetas))
	for k := range adgs {
		adgs[k], ranks[k] = make([]float64, nu), make([][]int, nu)
	}
	ranker := NewRanker(x.Popularity(), ni)
	err = ParallelFor(ctx, nu, 16, "", nil, func() func(lo, hi int) {
		raw, scores := make([]float64, ni), make([]float64, ni)
		mark := make([]bool, ni)
		z := make([][]float64, len(bases))
		for b := range z {
			if used[b] {
				z[b] = make([]float64, ni)
			}
		}
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				if u >= len(val) || len(val[u]) == 0 {
					continue
				}
				hist := x.Row(u)
				markHistory(mark, hist, true)
				for b, base := range bases {
					if used[b] {
						zscoreBase(base, u, hist, mark, raw, z[b])
					}
				}
				markHistory(mark, hist, false)
				for k, theta := range thetas {
					clear(scores)
					for b, w := range theta {
						if w == 0 {
							continue
						}
						for i, v := range z[b] {
							scores[i] += w * v
						}
					}
					ranks[k][u] = ranker.Ranks(scores, hist, val[u])
					adgs[k][u] = metrics.ADG(ranks[k][u])
				}
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	adg = make([]float64, len(thetas))
	for k := range thetas {
		sum, users := 0.0, 0
		for u := range min(nu, len(val)) {
			if len(val[u]) > 0 {
				sum += adgs[k][u]
				users++
			}
		}
		if users > 0 {
			adg[k] = sum / float64(users)
		}
	}
	return adg, ranks, ctx.Err()
}

// pooledADG is the mean ADG over nHeld held-out and nVal validation
// positives whose means are held and val: the estimate of a θ's ADG on
// all the items the search holds out, weighted by their number.
func pooledADG(held float64, nHeld int, val float64, nVal int) float64 {
	if nHeld+nVal == 0 {
		return 0
	}
	return (held*float64(nHeld) + val*float64(nVal)) / float64(nHeld+nVal)
}

// learnDirect learns θ on the stack: OPT-ADG per λ of lambdas, then the
// direct search (ascend) from each of its θ and from the best single base;
// the learnt θ is the direct one with the highest held-out ADG (OPT-ADG's
// own θ rank below it there and on test items: README "febr-blend"). It
// returns it and the OPT-ADG trials.
func (st *blendStack) learnDirect(ctx context.Context, o FEBROptions, lambdas []float64, onFit func()) (BlendTrial, []BlendTrial, error) {
	start, err := st.bestSingle(ctx)
	if err != nil {
		return BlendTrial{}, nil, err
	}
	starts := [][]float64{start}
	var trials []BlendTrial
	for _, lambda := range lambdas {
		ol := o
		ol.Lambda = lambda
		res, err := st.learn(ctx, ol)
		if err != nil {
			return BlendTrial{}, nil, err
		}
		trials = append(trials, BlendTrial{Label: "opt-adg λ=" + strconv.FormatFloat(lambda, 'g', -1, 64), Theta: res.theta})
		starts = append(starts, res.theta)
		if onFit != nil {
			onFit()
		}
	}
	learnt := BlendTrial{Label: "direct", HeldOutADG: -1}
	for _, t0 := range starts {
		theta, adg, err := st.ascend(ctx, t0)
		if err != nil {
			return BlendTrial{}, nil, err
		}
		if adg > learnt.HeldOutADG {
			learnt.Theta, learnt.HeldOutADG = theta, adg
		}
	}
	for k := range trials {
		if trials[k].HeldOutADG, err = st.adg(ctx, trials[k].Theta); err != nil {
			return BlendTrial{}, nil, err
		}
	}
	return learnt, trials, nil
}

// crossFitADG is the held-out ADG of learnDirect's θ scored on users it
// was not learnt on: the eligible users split in two halves by a shuffle
// seeded with o.Seed, θ learnt on each half (learnDirect) and scored on
// the other, the mean over all their positives. The learnt θ's own
// held-out ADG is measured on the items it was fitted on, so it is biased
// up against a base alone's, which learns nothing there; this estimate is
// not (and, learnt on half the users, if anything biased down). With
// fewer than two users, the learnt θ's held-out ADG is all there is.
func (st *blendStack) crossFitADG(ctx context.Context, o FEBROptions, lambdas []float64) (float64, error) {
	users := slices.Clone(st.ts.eligible)
	if len(users) < 2 {
		learnt, _, err := st.learnDirect(ctx, o, lambdas, nil)
		return learnt.HeldOutADG, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0xc2055))
	rng.Shuffle(len(users), func(a, b int) { users[a], users[b] = users[b], users[a] })
	halves := [2][]int32{users[:len(users)/2], users[len(users)/2:]}
	for _, h := range halves {
		slices.Sort(h)
	}
	sum, n := 0.0, 0
	for h := range halves {
		fit, _, err := st.on(halves[h]).learnDirect(ctx, o, lambdas, nil)
		if err != nil {
			return 0, err
		}
		s, c, err := st.on(halves[1-h]).adgSum(ctx, fit.Theta)
		if err != nil {
			return 0, err
		}
		sum, n = sum+s, n+c
	}
	if n == 0 {
		return 0, nil
	}
	return sum / float64(n), nil
}

// searchBase chooses one base's parameters among its kind's candidates by
// the validation ADG, the first of equals, warm-starting consecutive
// candidates that differ in ℓ1 only (as recsys/eval's Tune does).
func searchBase(ctx context.Context, x *Matrix, val [][]uint32, name string, g Grid, c Caps, cache *NeighbourCache, onFit func()) (Model, Params, error) {
	kind, err := KindOf(name)
	if err != nil {
		return nil, Params{}, err
	}
	if kind.Search != nil {
		return nil, Params{}, fmt.Errorf("recsys: %s cannot be a base of %s", name, BlendModel)
	}
	var cands []Params
	if kind.Candidates != nil {
		cands = kind.Candidates(g, c)
	}
	if len(cands) == 0 {
		cands = []Params{{}}
	}
	var (
		best     Model
		bestP    Params
		bestADG  = -1.0
		prev     Model
		prevP    Params
		havePrev bool
	)
	for _, cp := range cands {
		m := kind.New()
		fp := cp
		fp.Cache = cache
		if havePrev && prevP.K == cp.K && prevP.L2 == cp.L2 {
			fp.Init = prev
		}
		if err := m.Fit(ctx, x, fp); err != nil {
			return nil, Params{}, fmt.Errorf("recsys: %s base %s: %w", BlendModel, name, err)
		}
		adg, err := modelValidationADG(ctx, m, x, val)
		if err != nil {
			return nil, Params{}, err
		}
		if adg > bestADG {
			best, bestP, bestADG = m, cp, adg
		}
		prev, prevP, havePrev = m, cp, true
		if onFit != nil {
			onFit()
		}
	}
	return best, bestP, nil
}

// blockRows splits the rows of a block into those of the positives pos
// and the rest, the sampled negatives (items and pos sorted, as the
// holdout's positives are).
func blockRows(items, pos []uint32) (posRows, negRows []int32) {
	for q, i := range items {
		if _, ok := slices.BinarySearch(pos, i); ok {
			posRows = append(posRows, int32(q))
		} else {
			negRows = append(negRows, int32(q))
		}
	}
	return posRows, negRows
}
