package febr

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/recsys-engine/recsys/recsys"
)

// BlendName is the registry name of the learnt blend: FEBR's linear
// ranker (dissertation §4.5) over the per-user z-scored scores of several
// base models, θ learnt by OPT-ADG (Algorithm 4.2) on held-out positives.
const BlendName = "febr-blend"

// DefaultBlendBases are the base models of febr-blend that are registered
// (the matrix factorisation lives in recsys/mf and registers itself);
// popular lets the blend correct the others' popularity bias. ials is the
// best single model on Last.fm (docs/evaluation.md "febr-blend's search"), so it is a base;
// wrmf stays, as a base the direct search can weigh 0 (issue 17).
var DefaultBlendBases = []string{"popular", "kunn", "slim", "ease", "rp3beta", "wrmf", "ials"}

// Defaults of BlendOptions.
const (
	DefaultBlendHoldout   = 0.2
	DefaultBlendNegatives = 1000
)

// DefaultBlendLambdas is the λ grid of the blend's search.
var DefaultBlendLambdas = []float64{1e-4, 1e-2}

// BlendOptions configure febr-blend (Options.Blend); the other
// Options (λ, η, γ, Iterations, Seed) apply to its OPT-ADG run.
type BlendOptions struct {
	// Bases are the registry names of the base models (nil: the
	// registered ones of DefaultBlendBases); Params their parameters, in
	// the same order (missing ones take the defaults).
	Bases  []string
	Params []recsys.Params
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
	Fitted   []recsys.Model
	FittedOn *recsys.Matrix
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
type BaseSearch func(ctx context.Context, x *recsys.Matrix, val [][]uint32, name string, g recsys.Grid, c recsys.Caps, cache *recsys.NeighbourCache, onFit func()) (recsys.Model, recsys.Params, error)

// fitted is base b when it was fitted on x (BlendOptions.Fitted), else nil.
func (o *BlendOptions) fitted(x *recsys.Matrix, b int) recsys.Model {
	if o.FittedOn != x || b >= len(o.Fitted) || b >= len(o.Params) {
		return nil
	}
	return o.Fitted[b]
}

// Blend is febr-blend: f_θ(u, i) = Σ_b θ_b z_b(u, i), where z_b(u, i) is
// base b's score of i for u's live history, z-scored over the items not
// in the history (so that the bases' scales, which differ by orders of
// magnitude and from user to user, do not weigh in θ).
type Blend struct {
	names  []string
	bases  []recsys.Model
	theta  []float64
	params []recsys.Params
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

func (m *Blend) Name() string { return BlendName }

// Info describes the last fit (zero after UnmarshalBinary).
func (m *Blend) Info() BlendInfo { return m.info }

// Theta returns a copy of the learnt weights, one per base (Bases).
func (m *Blend) Theta() []float64 { return slices.Clone(m.theta) }

// WithTheta returns the blend of the same fitted bases with other weights
// (one per base), for reports comparing weights on the same fits.
func (m *Blend) WithTheta(theta []float64) (*Blend, error) {
	if len(theta) != len(m.bases) {
		return nil, fmt.Errorf("febr: %d weights for %d bases", len(theta), len(m.bases))
	}
	out := &Blend{}
	out.set(m.names, m.bases, m.params, slices.Clone(theta), m.nItems)
	return out, nil
}

// Bases returns the base model names, in the order of Theta.
func (m *Blend) Bases() []string { return slices.Clone(m.names) }

// Base is base b's fitted model and parameters.
func (m *Blend) Base(b int) (recsys.Model, recsys.Params) { return m.bases[b], m.params[b] }

// BlendBases are the base models febr-blend uses when its options name
// none: the registered ones of DefaultBlendBases.
func BlendBases() []string { return blendBases(nil) }

func blendBases(o *BlendOptions) []string {
	if o != nil && len(o.Bases) > 0 {
		return o.Bases
	}
	var out []string
	for _, n := range DefaultBlendBases {
		if _, err := recsys.KindOf(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// fitBases fits every base on x with its parameters (cache, when not nil,
// is x's neighbour cache), taking those of bo fitted on x as they are (bo
// nil: none).
func fitBases(ctx context.Context, x *recsys.Matrix, names []string, params []recsys.Params, bo *BlendOptions, cache *recsys.NeighbourCache, progress recsys.ProgressFunc) ([]recsys.Model, error) {
	out := make([]recsys.Model, len(names))
	for b, name := range names {
		if name == BlendName || IsVariant(name) {
			return nil, fmt.Errorf("febr: %s cannot be a base of %s", name, BlendName)
		}
		if bo != nil {
			if out[b] = bo.fitted(x, b); out[b] != nil {
				continue
			}
		}
		m, err := recsys.New(name)
		if err != nil {
			return nil, err
		}
		var p recsys.Params
		if b < len(params) {
			p = params[b]
		}
		p.Cache, p.Init, p.Progress = cache, nil, progress
		if err := m.Fit(ctx, x, p); err != nil {
			return nil, fmt.Errorf("febr: %s base %s: %w", BlendName, name, err)
		}
		out[b] = m
	}
	return out, nil
}

// blendSetup is p's FEBR options, blend options and base names.
func blendSetup(p recsys.Params) (Options, BlendOptions, []string, error) {
	o, err := optionsOf(p)
	if err != nil {
		return o, BlendOptions{}, nil, err
	}
	var bo BlendOptions
	if o.Blend != nil {
		bo = *o.Blend
	}
	names := blendBases(&bo)
	if len(names) == 0 {
		return o, bo, nil, fmt.Errorf("febr: %s has no base model", BlendName)
	}
	return o, bo, names, nil
}

func (m *Blend) Fit(ctx context.Context, x *recsys.Matrix, p recsys.Params) error {
	o, bo, names, err := blendSetup(p)
	if err != nil {
		return err
	}
	params := make([]recsys.Params, len(names))
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

func (m *Blend) set(names []string, bases []recsys.Model, params []recsys.Params, theta []float64, nItems int) {
	m.names, m.bases, m.theta, m.nItems = names, bases, theta, nItems
	m.params = make([]recsys.Params, len(params))
	for b, p := range params {
		m.params[b] = recsys.Params{K: p.K, L1: p.L1, L2: p.L2, Extra: p.Extra}
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
func zscoreBase(base recsys.Model, self int, history []uint32, mark []bool, raw, z []float64) {
	mean, inv := zscoreStats(base, self, history, mark, raw)
	for i, s := range raw {
		z[i] = (s - mean) * inv
	}
}

// zscoreStats scores base for history into raw and returns the mean and
// the inverse standard deviation of the scores over the items not in the
// history (mark); inv is 0 when they do not vary there.
func zscoreStats(base recsys.Model, self int, history []uint32, mark []bool, raw []float64) (mean, inv float64) {
	recsys.ScoreUser(base, self, history, raw)
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
	recsys.FillScores(scores, m.nItems, func(buf []float64) {
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
func (m *Blend) Explain(history []uint32, items []uint32, n int) [][]recsys.Contribution {
	if ex, ok := leader[recsys.Explainer](m); ok {
		return ex.Explain(history, items, n)
	}
	return make([][]recsys.Contribution, len(items))
}

// Similar implements ItemNeighbourhood with the item lists of the most
// weighted base model that keeps them.
func (m *Blend) Similar(item uint32) []recsys.Neighbour {
	if nb, ok := leader[recsys.ItemNeighbourhood](m); ok {
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
		for k, v := range recsys.ParamsOf(m.bases[b]) {
			out[name+"."+k] = v
		}
	}
	return out
}

// blendTime is febr-blend's training time: a power law fitted (least
// squares of log seconds on log positives) to its tune + fit wall seconds
// at 1M, 5M and 20M positives on 27,000 items of docs/performance.md's
// "Auto mode at 1M, 5M and 20M" table (75, 185, 198 s), where it reused
// the job's fits of every base; a base the job did not fit costs its own
// time more.
var blendTime = recsys.TimeLaw{At1M: 84.3, Exponent: 0.330}

// blendCost is febr-blend's Service.Cost: blendTime, and in memory every
// base at once (each base's predicted bytes: the blend fits those the job
// did not) with the stack of blendStackUsers users' held-out positives
// and DefaultBlendNegatives negatives scored by every base (8 bytes a
// score).
func blendCost(s recsys.Shape) recsys.Cost {
	bases := BlendBases()
	b := int64(blendStackUsers) * int64(DefaultBlendNegatives) * int64(len(bases)) * 8
	for _, n := range bases {
		if c, ok := recsys.CostOf(n, s); ok {
			b += c.Bytes
		}
	}
	return recsys.Cost{Seconds: blendTime.Seconds(s.Positives), Bytes: b,
		Memory: fmt.Sprintf("its %d bases at once (%s) and their stacked scores", len(bases), strings.Join(bases, ", "))}
}
