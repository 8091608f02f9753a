package recsys

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// affSLIM names the fsSLIM item affinity of a FEBR variant (the others are
// simCosine and simKUNN).
const affSLIM = "slim"

// febrVariant is one FEBR feature representation (dissertation §4.7.3):
// which sides the features come from and which affinity matrices they
// aggregate.
type febrVariant struct {
	name     string // registry name
	label    string // report name
	item     bool   // FEBRi features: ActiveItems(u, i)
	user     bool   // FEBRu features: ActiveUsers(u, i)
	affinity string // simCosine, simKUNN or affSLIM
}

// febrVariants are the variants of Table 4.3 in report order. SLIM learns
// an item affinity only, so it has FEBRi alone (§4.7.3).
var febrVariants = []febrVariant{
	{"febr-i-cosine", "FEBRi-cosine", true, false, simCosine},
	{"febr-u-cosine", "FEBRu-cosine", false, true, simCosine},
	{"febr-iu-cosine", "FEBRiu-cosine", true, true, simCosine},
	{"febr-i-kunn", "FEBRi-kunn", true, false, simKUNN},
	{"febr-u-kunn", "FEBRu-kunn", false, true, simKUNN},
	{"febr-iu-kunn", "FEBRiu-kunn", true, true, simKUNN},
	{"febr-i-slim", "FEBRi-slim", true, false, affSLIM},
}

// The service trains febr by default and compares every variant in auto
// mode but febr-i-slim, which febr is. On large data their grids stay
// fixed: each step past an end is a whole search.
func init() {
	v, _ := febrVariantOf(FEBRModel)
	Register(FEBRModel, v.kind(Service{Default: true, Auto: true, FixedGridAtScale: true}))
	for _, v := range febrVariants {
		Register(v.name, v.kind(Service{Auto: v.affinity != affSLIM, FixedGridAtScale: true}))
	}
}

// kind is the registration of a variant: its search (febr_search.go)
// tunes λ per k on features built once.
func (v febrVariant) kind(s Service) Kind {
	reuses := v.baselines()
	if v.affinity == affSLIM {
		reuses = append(reuses, "slim")
	}
	return Kind{New: func() Model { return &FEBR{v: v} }, Candidates: v.candidates, Search: v.search, Reuses: reuses, Service: s}
}

// FEBRModel is the registry name of the service's FEBR model: the FEBRi
// variant over the SLIM affinity, the best of Table 4.3.
const FEBRModel = "febr"

func febrVariantOf(name string) (febrVariant, bool) {
	if name == FEBRModel {
		v := febrVariants[len(febrVariants)-1]
		v.name = FEBRModel
		return v, true
	}
	for _, v := range febrVariants {
		if v.name == name {
			return v, true
		}
	}
	return febrVariant{}, false
}

// baseline is the registry name of the neighbourhood model that ranks as
// the variant's aggsum predictor (initialTheta), or "" (the two-sided
// variants z-score each side's aggsum apart; SLIM has FEBROptions.SLIM).
func (v febrVariant) baseline() string {
	switch {
	case v.item && v.user:
		return ""
	case v.affinity == simCosine && v.item:
		return "itemknn"
	case v.affinity == simCosine:
		return "userknn"
	case v.affinity == simKUNN && v.item:
		return "kunn-i"
	case v.affinity == simKUNN:
		return "kunn-u"
	}
	return ""
}

// baselines are the neighbourhood models whose choices of k a KByBaseline
// search of v takes (FEBROptions.Baselines): a one-sided variant's
// baseline, or for FEBRiu the baselines of its two one-sided siblings
// (febr-iu-cosine itemknn and userknn, febr-iu-kunn kunn-i and kunn-u);
// none for FEBRi-slim, which takes slim's choice (FEBROptions.SLIM).
func (v febrVariant) baselines() []string {
	if b := v.baseline(); b != "" {
		return []string{b}
	}
	if !v.item || !v.user || v.affinity == affSLIM {
		return nil
	}
	var out []string
	for _, side := range []febrVariant{{item: true, affinity: v.affinity}, {user: true, affinity: v.affinity}} {
		out = append(out, side.baseline())
	}
	return out
}

// IsFEBR reports whether a registry name is FEBR or one of its variants.
func IsFEBR(name string) bool {
	_, ok := febrVariantOf(name)
	return ok
}

// FEBRVariantInfo describes the representation of a FEBR registry name.
type FEBRVariantInfo struct {
	// Label is the report name, e.g. "FEBRi-slim".
	Label string
	// Item and User say which sides the features come from.
	Item, User bool
	// Affinity is "cosine", "kunn" or "slim".
	Affinity string
	// Baselines are the neighbourhood models whose choices
	// FEBROptions.Baselines may pass: for a one-sided variant the model
	// that ranks as its aggsum predictor, for FEBRiu those of its two
	// one-sided siblings, none for FEBRi-slim.
	Baselines []string
}

// FEBRVariantOf describes a FEBR registry name; ok is false for the
// other models.
func FEBRVariantOf(name string) (info FEBRVariantInfo, ok bool) {
	v, ok := febrVariantOf(name)
	return FEBRVariantInfo{Label: v.label, Item: v.item, User: v.user, Affinity: v.affinity, Baselines: v.baselines()}, ok
}

// Variant is one report row a model name stands for: the registry name to
// fit and the label of the row.
type Variant struct {
	Name, Label string
}

// Variants returns the report rows of a model name: every FEBR variant for
// "febr", the variant itself for a FEBR variant name, and nil for the other
// models (one row under their own name).
func Variants(name string) []Variant {
	if name == FEBRModel {
		out := make([]Variant, len(febrVariants))
		for k, v := range febrVariants {
			out[k] = Variant{Name: v.name, Label: v.label}
		}
		return out
	}
	if v, ok := febrVariantOf(name); ok {
		return []Variant{{Name: v.name, Label: v.label}}
	}
	return nil
}

// FEBROptions configure FEBR (Params.FEBR). Zero values take the defaults.
type FEBROptions struct {
	// Lambda is the ℓ2 constant λ on θ (§4.6); 0 means DefaultFEBRLambda.
	Lambda float64
	// Gamma is the WARP cut-off γ of Algorithm 4.2: at most ⌈(|I|−1)/γ⌉
	// draws per iteration; 0 means 50 (§4.7.3).
	Gamma float64
	// LearningRate is the SGD step η; 0 means DefaultFEBRLearningRate.
	LearningRate float64
	// MaxIterations caps OPT-ADG; 0 means 2×10⁶ (§4.7.3).
	MaxIterations int
	// Validation, when set, holds per user of the training matrix the
	// held-out items (sorted, not in the user's training row) whose ADG
	// decides early stopping: it is evaluated every EvalEvery iterations
	// and training stops after Patience evaluations without improvement,
	// keeping the best θ. Without it, OPT-ADG runs Iterations iterations.
	Validation [][]uint32
	// EvalEvery (0: DefaultFEBREvalEvery) and Patience (0:
	// DefaultFEBRPatience) control early stopping.
	EvalEvery, Patience int
	// Iterations is the number of iterations without Validation (0:
	// DefaultFEBRIterations; negative: none, θ stays the aggsum
	// predictor); a search reports the iteration count of its best θ
	// (FEBRInfo) so that a refit on all the data can reuse it.
	Iterations int
	// Seed seeds OPT-ADG; the same seed gives the same model.
	Seed uint64
	// MemoryBudget bounds the feature memo in bytes (0: DefaultFEBRMemory;
	// negative: no memo, blocks are recomputed per user as training
	// visits them).
	MemoryBudget int64
	// Holdout, when positive, is the share of every user's positives that
	// OPT-ADG draws i⁺ from, computing the features of all pairs from the
	// other positives only; 0 draws i⁺ from all of O⁺u with features over
	// all of X, as Algorithm 4.2 does. See the package documentation.
	Holdout float64
	// SLIM, when it is a slim model fitted on the same matrix with the
	// same k, supplies the fsSLIM affinity instead of fitting it again. In
	// a search with FEBRGrid.KByBaseline it must be the choice of a slim
	// search on the same matrix, grid and validation items (eval.Tune's),
	// whose k and (ℓ1, ℓ2) the search then takes.
	SLIM Model
	// Baselines, in a search with FEBRGrid.KByBaseline, may hold the
	// choices of the searches of the variant's baselines (FEBRVariantInfo)
	// on the same matrix, grid and validation items (eval.Tune's).
	//
	// A one-sided variant's aggsum predictor ranks as its baseline
	// (febr-i-cosine itemknn, febr-u-cosine userknn, febr-i-kunn kunn-i,
	// febr-u-kunn kunn-u: initialTheta): the same criterion over the same
	// k, so the search takes the baseline's k instead of building the
	// features of every k to compare their aggsum predictors again.
	//
	// FEBRiu compares its aggsum predictor only at the k's its two sides'
	// baselines chose (one k when they agree, then no comparison): a
	// reduced grid, not the same criterion, since its predictor adds the
	// two sides' z-scored aggsums and ranks as neither baseline. Without
	// both baselines it compares every k of the grid.
	Baselines []Model
	// Blend configures febr-blend (febr_blend.go); nil takes its
	// defaults.
	Blend *BlendOptions
}

// Defaults of FEBROptions.
const (
	DefaultFEBRLambda       = 1e-3
	DefaultFEBRGamma        = 50
	DefaultFEBRLearningRate = 0.001
	DefaultFEBRMaxIter      = 2_000_000
	DefaultFEBREvalEvery    = 20_000
	DefaultFEBRPatience     = 5
	DefaultFEBRIterations   = 100_000
	DefaultFEBRMemory       = 2 << 30
)

func (p Params) febrOptions() FEBROptions {
	var o FEBROptions
	if p.FEBR != nil {
		o = *p.FEBR
	}
	if o.Lambda == 0 {
		o.Lambda = DefaultFEBRLambda
	}
	if o.Gamma <= 0 {
		o.Gamma = DefaultFEBRGamma
	}
	if o.LearningRate <= 0 {
		o.LearningRate = DefaultFEBRLearningRate
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = DefaultFEBRMaxIter
	}
	if o.EvalEvery <= 0 {
		o.EvalEvery = DefaultFEBREvalEvery
	}
	if o.Patience <= 0 {
		o.Patience = DefaultFEBRPatience
	}
	if o.Iterations == 0 {
		o.Iterations = DefaultFEBRIterations
	}
	if o.MemoryBudget == 0 {
		o.MemoryBudget = DefaultFEBRMemory
	}
	return o
}

func (o FEBROptions) optConfig(progress ProgressFunc) optConfig {
	cfg := optConfig{
		lambda: o.Lambda, eta: o.LearningRate, gamma: o.Gamma,
		maxIter: o.MaxIterations, evalEvery: o.EvalEvery, patience: o.Patience,
		validation: o.Validation, seed: o.Seed, progress: progress,
	}
	if len(o.Validation) == 0 {
		cfg.maxIter = max(0, min(o.Iterations, o.MaxIterations))
	}
	return cfg
}

// FEBR is Feature-Extraction-Based Ranking (dissertation §4.5–4.6): a
// linear predictor f_θ(u, i) = θ·z(φ(u, i)) over the z-scored aggregates of
// the item and/or user affinity vectors of (u, i) and the missing-feature
// indicators, with θ learnt by OPT-ADG (Algorithm 4.2, febr_opt.go).
//
// Scoring extracts the features from the live history; items with missing
// features on every side share the score θ·z(missing), so they come after
// or before the candidates as one block ordered by popularity (the
// tie-break of every ranking).
type FEBR struct {
	v      febrVariant
	k      int
	lambda float64
	l1, l2 float64 // the fsSLIM constants of the SLIM affinity
	theta  []float64
	ext    *febrExtractor
	x      *Matrix // the training matrix of the user side; nil for FEBRi
	sMiss  float64
	info   FEBRInfo
	// valRanks are θ's ranks of the validation items early stopping
	// ranked (optResult.ranks), for the search's Choice; not encoded.
	valRanks [][]int
}

// FEBRInfo describes a FEBR fit.
type FEBRInfo struct {
	// Iterations is the OPT-ADG iteration count of θ; ValidationADG its
	// validation ADG (0 without validation items); Evaluations the number
	// of validation evaluations made.
	Iterations    int
	ValidationADG float64
	Evaluations   int
	// Updates is how many of those iterations found a violator and
	// stepped on the loss.
	Updates int
	// Candidates is the number of (u, i) training pairs with non-missing
	// features (estimated from the users of the z-score statistics when
	// streaming); MemoBytes the size of the feature memo, or what it would
	// take (Streaming when that exceeded the budget and training computed
	// the features of the pairs it looked at instead).
	Candidates int64
	MemoBytes  int64
	Streaming  bool
	// FeatureSeconds and OptSeconds time the feature pass and OPT-ADG.
	FeatureSeconds, OptSeconds float64
}

func (m *FEBR) Name() string { return m.v.name }

// Variant is the report label of the fitted representation, e.g.
// "FEBRi-slim".
func (m *FEBR) Variant() string { return m.v.label }

// Info describes the last fit (zero after UnmarshalBinary).
func (m *FEBR) Info() FEBRInfo { return m.info }

// Theta returns a copy of the learnt weights, in feature order
// [mean, std, min, max, len, sum, missing] per side, item side first.
func (m *FEBR) Theta() []float64 { return slices.Clone(m.theta) }

// FeatureNames names the entries of Theta.
func (m *FEBR) FeatureNames() []string {
	var out []string
	for _, side := range []struct {
		on   bool
		name string
	}{{m.v.item, "item."}, {m.v.user, "user."}} {
		if side.on {
			for _, f := range featureNames {
				out = append(out, side.name+f)
			}
		}
	}
	return out
}

// febrExtractorFor builds the extractor of variant v with neighbourhood
// size p.K on x: item lists from p.Cache (cosine or KUNN), or the fsSLIM
// weights slimW over the cosine KNN(i) (fitted with p.L1, p.L2 when slimW
// is nil); the user side over x.
func febrExtractorFor(ctx context.Context, x *Matrix, v febrVariant, p Params, slimW *Neighbours) (*febrExtractor, error) {
	var items *itemSide
	if v.item {
		var (
			nb  *Neighbours
			err error
		)
		switch v.affinity {
		case simCosine, simKUNN:
			nb, err = itemNeighbours(ctx, x, v.affinity, p)
		case affSLIM:
			nb, err = itemNeighbours(ctx, x, simCosine, p)
			if err != nil {
				return nil, err
			}
			w := slimW
			if w == nil {
				co, err := slimCounts(ctx, x, p)
				if err != nil {
					return nil, err
				}
				if w, err = fitSLIM(ctx, x, nb, nil, co, p); err != nil {
					return nil, err
				}
			}
			nb = slimAffinity(nb, w, x.Items())
		default:
			err = fmt.Errorf("recsys: unknown affinity %q", v.affinity)
		}
		if err != nil {
			return nil, err
		}
		items = newItemSide(x.Items(), nb)
	}
	var users *userSide
	if v.user {
		// KNN(u) of the training users memoised at k_max in the cache,
		// shared by the grid, the λ runs, the validation evaluations and
		// OPT-ADG's draws (and with userknn, kunn-u): a search at 20M
		// costs ~3·10⁶ operations per user and search.
		users = newUserSide(x, p.K, v.affinity == simKUNN).withCache(p.Cache)
	}
	return newFEBRExtractor(p.K, x.Items(), items, users), ctx.Err()
}

// slimAffinity returns, for every item i, its cosine KNN(i) in KNN order
// with A(i, j) = W(j, i), the fsSLIM weight (0 where fsSLIM set it to 0):
// the SLIM affinity matrix of §4.7.3 with ActiveItems(u, i) = O⁺u ∩ KNN(i)
// as for the other affinities, so that agglen, aggmean, aggmin and aggstd
// see the neighbours fsSLIM zeroed.
func slimAffinity(knn, w *Neighbours, nItems int) *Neighbours {
	weight := make([]float64, nItems)
	rows := make([][]Neighbour, knn.Rows())
	for i := range rows {
		for _, e := range w.Row(i) {
			weight[e.Index] = e.Value
		}
		row := slices.Clone(knn.Row(i))
		for k := range row {
			row[k].Value = weight[row[k].Index]
		}
		for _, e := range w.Row(i) {
			weight[e.Index] = 0
		}
		rows[i] = row
	}
	return fromRows(rows)
}

// initialTheta is the aggsum predictor: θ = 1 on each side's aggsum, 0
// elsewhere. For FEBRi and FEBRu it ranks exactly as item-p, SLIM and
// user-p do (z-scoring is an increasing affine map and missing pairs have
// aggsum 0, the smallest possible), so OPT-ADG starts from the baseline
// and, with early stopping keeping the best θ, ends no worse on the
// validation set.
func (e *febrExtractor) initialTheta() []float64 {
	theta := make([]float64, e.dim)
	for off := 0; off < e.dim; off += featuresPerSide {
		theta[off+aggSum] = 1
	}
	return theta
}

// slimOf returns o.SLIM when it is a fitted slim model usable for x and k.
func slimOf(o FEBROptions, x *Matrix, k int) *ItemP {
	s, ok := o.SLIM.(*ItemP)
	if !ok || s.name != "slim" || s.side == nil || s.side.nItems != x.Items() || s.k != k {
		return nil
	}
	return s
}

func (m *FEBR) Fit(ctx context.Context, x *Matrix, p Params) error {
	p = p.withDefaults()
	o := p.febrOptions()
	var slimW *Neighbours
	if slim := slimOf(o, x, p.K); slim != nil {
		slimW, p.L1, p.L2 = slim.side.fwd, slim.l1, slim.l2
	}
	var ho *febrHoldout
	if o.Holdout > 0 {
		var err error
		if ho, err = newFEBRHoldout(x, o.Holdout, o.Seed, nil, nil); err != nil {
			return err
		}
	}
	data, err := prepareFEBR(ctx, x, m.v, p, o, slimW, ho)
	if err != nil {
		return err
	}
	if err := m.train(ctx, data, p.K, p.L1, p.L2, o, p.Progress); err != nil {
		return err
	}
	if m.ext.users != nil {
		// The memo of KNN(u) served training; a served model scores live
		// histories and need not keep it.
		m.ext.users.lists = nil
	}
	return nil
}

// febrHoldout is a training matrix with a share of every user's positives
// held out: the features OPT-ADG learns from are then computed without the
// pairs it ranks, as the features of validation, test and future items are
// (FEBROptions.Holdout).
type febrHoldout struct {
	x     *Matrix    // the rest, the histories
	pos   [][]uint32 // held out per user, sorted
	cache *NeighbourCache
}

// newFEBRHoldout holds out round(share·|O⁺u|) uniformly drawn items of
// every user with at least two positives, keeping one at least; of those
// in users alone when users (ascending) is not nil. cache, when not nil,
// is made for the rest with the given k_max.
func newFEBRHoldout(x *Matrix, share float64, seed uint64, kmax []int, users []int) (*febrHoldout, error) {
	rng := rand.New(rand.NewPCG(seed, 0x401d))
	ho := &febrHoldout{pos: make([][]uint32, x.Users())}
	var rest []Pair
	var items []uint32
	for u := range x.Users() {
		items = append(items[:0], x.Row(u)...)
		n := len(items)
		h := 0
		if _, in := slices.BinarySearch(users, u); n >= 2 && (users == nil || in) {
			h = min(n-1, max(1, int(math.Round(share*float64(n)))))
		}
		for k := 0; k < h; k++ {
			j := k + rng.IntN(n-k)
			items[k], items[j] = items[j], items[k]
		}
		ho.pos[u] = slices.Sorted(slices.Values(items[:h]))
		for _, i := range items[h:] {
			rest = append(rest, Pair{User: uint32(u), Item: i})
		}
	}
	var err error
	if ho.x, err = NewMatrix(x.Users(), x.Items(), rest); err != nil {
		return nil, err
	}
	if len(kmax) > 0 {
		ho.cache = NewNeighbourCache(ho.x, slices.Max(kmax))
	}
	return ho, nil
}

// febrData is what one FEBR fit trains on: full holds the features over
// the training matrix (the model's; with validation items, their ADG
// decides early stopping) and train the pairs OPT-ADG draws, full itself
// or, with a holdout, the features over the rest with the held-out items
// as positives.
type febrData struct {
	full, train *febrTrainSet
	seconds     float64
}

// prepareFEBR builds the extractors and training sets of variant v with
// p.K on x (see febrExtractorFor for p and slimW). With a holdout, the
// SLIM affinity of the rest is fitted with p.L1 and p.L2.
func prepareFEBR(ctx context.Context, x *Matrix, v febrVariant, p Params, o FEBROptions, slimW *Neighbours, ho *febrHoldout) (*febrData, error) {
	start := time.Now()
	ext, err := febrExtractorFor(ctx, x, v, p, slimW)
	if err != nil {
		return nil, err
	}
	budget := o.MemoryBudget
	if ho != nil && len(o.Validation) == 0 {
		budget = -1 // only the statistics are needed
	}
	d := &febrData{}
	if d.full, err = newFEBRTrainSet(ctx, x, ext, nil, budget, p.Progress); err != nil {
		return nil, err
	}
	d.train = d.full
	if ho != nil {
		ph := p
		ph.Cache = ho.cache
		extH, err := febrExtractorFor(ctx, ho.x, v, ph, nil)
		if err != nil {
			return nil, err
		}
		if d.train, err = newFEBRTrainSet(ctx, ho.x, extH, ho.pos, o.MemoryBudget, p.Progress); err != nil {
			return nil, err
		}
	}
	d.seconds = time.Since(start).Seconds()
	return d, nil
}

// train runs OPT-ADG on data and makes m the resulting model.
func (m *FEBR) train(ctx context.Context, data *febrData, k int, l1, l2 float64, o FEBROptions, progress ProgressFunc) error {
	start := time.Now()
	res, err := data.train.optADG(ctx, data.full.ext.initialTheta(), o.optConfig(progress), data.full)
	if err != nil {
		return err
	}
	m.set(data.full.ext, data.full.x, k, o.Lambda, l1, l2, res.theta)
	m.valRanks = res.ranks
	m.info = FEBRInfo{
		Iterations: res.iterations, ValidationADG: res.validationADG, Evaluations: res.evaluations, Updates: res.updates,
		Candidates: data.full.candidates, MemoBytes: data.full.memoBytes, Streaming: data.full.blocks == nil,
		FeatureSeconds: data.seconds, OptSeconds: time.Since(start).Seconds(),
	}
	if data.train != data.full {
		m.info.MemoBytes += data.train.memoBytes
		m.info.Streaming = m.info.Streaming || data.train.blocks == nil
	}
	return nil
}

func (m *FEBR) set(ext *febrExtractor, x *Matrix, k int, lambda, l1, l2 float64, theta []float64) {
	m.ext, m.k, m.lambda, m.theta = ext, k, lambda, theta
	m.x = nil
	if m.v.user {
		m.x = x
	}
	m.l1, m.l2 = 0, 0
	if m.v.affinity == affSLIM {
		m.l1, m.l2 = l1, l2
	}
	zMiss := make([]float64, ext.dim)
	ext.zscore(ext.missingRaw(), zMiss)
	m.sMiss = dot(theta, zMiss)
}

func (m *FEBR) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

// ScoreUser fills θ·z(φ(u, i)) for the candidate items and the missing
// score elsewhere (self as in UserScorer).
func (m *FEBR) ScoreUser(self int, history []uint32, scores []float64) {
	fill(scores, m.ext.nItems, func(buf []float64) {
		for i := range buf {
			buf[i] = m.sMiss
		}
		z := make([]float64, m.ext.dim)
		m.ext.extract(self, history, func(i uint32, raw []float64) {
			m.ext.zscore(raw, z)
			buf[i] = dot(m.theta, z)
		})
	})
}

// Similar returns the item neighbour list KNN(i) with its affinities,
// best first, for the variants with an item side (for the SLIM affinity,
// the neighbours with a non-zero fsSLIM weight, as slim lists them); nil
// for FEBRu, which keeps no item lists.
func (m *FEBR) Similar(item uint32) []Neighbour {
	if m.ext.items == nil || int(item) >= m.ext.nItems {
		return nil
	}
	row := m.ext.items.fwd.Row(int(item))
	if m.v.affinity != affSLIM {
		return row
	}
	out := make([]Neighbour, 0, len(row))
	for _, e := range row {
		if e.Value > 0 {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, compareNeighbours)
	return out
}

// Params reports k, λ and, for the SLIM affinity, the fsSLIM constants
// (ParamsOf).
func (m *FEBR) Params() map[string]float64 {
	out := map[string]float64{"k": float64(m.k), "lambda": m.lambda}
	if m.v.affinity == affSLIM {
		out["l1"], out["l2"] = m.l1, m.l2
	}
	return out
}

// MarshalBinary writes the variant (as the model name), k, λ, the fsSLIM
// constants, θ, the z-score statistics, the item affinity lists (item
// side) and the training matrix (user side).
func (m *FEBR) MarshalBinary() ([]byte, error) {
	if m.ext == nil {
		return nil, fmt.Errorf("recsys: %s is not fitted", m.v.name)
	}
	e := newEncoder(m.v.name)
	e.Uvarint(uint64(m.k))
	e.Float64(m.lambda)
	e.Float64(m.l1)
	e.Float64(m.l2)
	e.Uvarint(uint64(m.ext.nItems))
	e.Uvarint(uint64(m.ext.dim))
	for _, v := range [][]float64{m.theta, m.ext.mean, m.ext.std} {
		for _, f := range v {
			e.Float64(f)
		}
	}
	if m.v.item {
		writeNeighbours(e, m.ext.items.fwd)
	}
	if m.v.user {
		writeMatrix(e, m.x)
	}
	return e.Bytes(), nil
}

func (m *FEBR) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.v.name)
	k := d.Bounded(1 << 32)
	lambda, l1, l2 := d.Finite(), d.Finite(), d.Finite()
	nItems := d.Bounded(1 << 32)
	dim := d.Bounded(2 * featuresPerSide)
	want := 0
	if m.v.item {
		want += featuresPerSide
	}
	if m.v.user {
		want += featuresPerSide
	}
	if d.Err() == nil && (dim != want || k == 0) {
		return errCorrupt
	}
	vecs := make([][]float64, 3)
	for v := range vecs {
		vecs[v] = make([]float64, dim)
		for f := range vecs[v] {
			vecs[v][f] = d.Finite()
		}
	}
	var items *itemSide
	if m.v.item {
		nb := readNeighbours(d, nItems)
		if d.Err() == nil && nb.Rows() != nItems {
			return errCorrupt
		}
		if d.Err() == nil {
			items = newItemSide(nItems, nb)
		}
	}
	var x *Matrix
	var users *userSide
	if m.v.user {
		x = readMatrix(d)
		if d.Err() == nil && x.Items() != nItems {
			return errCorrupt
		}
		if d.Err() == nil {
			users = newUserSide(x, k, m.v.affinity == simKUNN)
		}
	}
	if err := d.Finish(); err != nil {
		return err
	}
	for _, s := range vecs[2] {
		if s <= 0 {
			return errCorrupt
		}
	}
	ext := newFEBRExtractor(k, nItems, items, users)
	ext.setStats(vecs[1], vecs[2])
	m.set(ext, x, k, lambda, l1, l2, vecs[0])
	m.info = FEBRInfo{}
	return nil
}

// Explain implements Explainer: the active items j ∈ O⁺u ∩ KNN(i) and
// active users v ∈ O⁺i ∩ KNN(u) of each item, weighted by the part of the
// score that is linear in their affinity, A·(θ_sum/σ_sum +
// θ_mean/(|active|·σ_mean)) per side (aggmin, aggmax and aggstd are not
// sums over the active set and are left out).
func (m *FEBR) Explain(history []uint32, items []uint32, n int) [][]Contribution {
	var nbs []Neighbour
	if u := m.ext.users; u != nil {
		sc := u.pool.Get().(*userScratch)
		nbs = slices.Clone(u.neighbours(-1, history, sc))
		u.pool.Put(sc)
	}
	out := make([][]Contribution, len(items))
	for k, i := range items {
		if int(i) >= m.ext.nItems {
			continue
		}
		var cs []Contribution
		off := 0
		if m.ext.items != nil {
			side := m.ext.items.explain(history, i, 1)
			m.weigh(side, off)
			cs = append(cs, side...)
			off += featuresPerSide
		}
		if m.ext.users != nil {
			side := m.ext.users.explain(nbs, i, 1)
			m.weigh(side, off)
			cs = append(cs, side...)
		}
		out[k] = top(cs, n)
	}
	return out
}

// weigh scales the affinities of one side's active set (features at off)
// by the linear part of the score.
func (m *FEBR) weigh(cs []Contribution, off int) {
	if len(cs) == 0 {
		return
	}
	std := m.ext.std
	w := m.theta[off+aggSum]/std[off+aggSum] + m.theta[off+aggMean]/(float64(len(cs))*std[off+aggMean])
	for k := range cs {
		cs[k].Weight *= w
	}
}
