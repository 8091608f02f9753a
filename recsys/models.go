package recsys

import (
	"context"
)

// Model is a top-N recommender: it learns from a snapshot of X and scores
// every item for a user's live history.
type Model interface {
	// Name is the registry name (see New).
	Name() string
	// Fit learns from the training matrix. It honours ctx cancellation and
	// reports progress through p.Progress when it is not nil.
	Fit(ctx context.Context, x *Matrix, p Params) error
	// Score fills scores (one per item) for a user with the given live
	// positive history: sorted, distinct item indices, possibly including
	// items the model never saw (indices ≥ the fitted item count are
	// ignored, and scores past the fitted item count are set to 0). Safe
	// for concurrent use after Fit or UnmarshalBinary.
	Score(history []uint32, scores []float64)
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}

// UserScorer is implemented by every model of this package. ScoreUser is
// Score for a user who is row self of the training matrix (−1 for a user
// the model was not fitted on): user-based models leave that row out of
// KNN(u), which §4.3 defines over U \ u. The evaluation uses it; serving may
// call Score, which treats the history as a new user.
type UserScorer interface {
	ScoreUser(self int, history []uint32, scores []float64)
}

// ScoreUser calls m.ScoreUser when m implements UserScorer, else m.Score.
func ScoreUser(m Model, self int, history []uint32, scores []float64) {
	if us, ok := m.(UserScorer); ok {
		us.ScoreUser(self, history, scores)
		return
	}
	m.Score(history, scores)
}

// ItemNeighbourhood is implemented by the models that keep item neighbour
// lists (itemknn, kunn, kunn-i, slim): Similar returns KNN(i) with the
// affinity A(i, j) of each neighbour, best first, for "similar items".
type ItemNeighbourhood interface {
	Similar(item uint32) []Neighbour
}

// Params are the hyper-parameters of a fit (dissertation §4.7.3: k is the
// main one, the others are secondary).
type Params struct {
	// K is the neighbourhood size k (§4.5.2); 0 means DefaultK.
	K int
	// L1 and L2 are the fsSLIM ℓ1 (λ) and ℓ2 (β) regularisation constants;
	// both 0 means DefaultL1 and DefaultL2.
	L1, L2 float64
	// Tol is the SLIM coordinate-descent tolerance on the largest weight
	// change of a sweep; 0 means 1e-4. MaxIter caps the sweeps of each
	// active-set pass (0 means 50): with a small ℓ2 constant, collinear
	// neighbours make some items converge slowly along directions where the
	// objective is flat; on Last.fm, 50 instead of 200 sweeps changes the
	// validation ADG by about 1e-4 and cuts the fit time by two thirds.
	Tol     float64
	MaxIter int
	// Cache, when it was built on the same matrix with k_max ≥ K, supplies
	// neighbour lists computed once for a whole grid search (§4.5.6).
	Cache *NeighbourCache
	// Init, when it is a fitted model of the same kind on the same matrix,
	// starts iterative solvers from its solution (a warm start along a
	// regularisation path; used by slim). The optimum does not depend on
	// it, only the time to reach it.
	Init Model
	// Progress, when not nil, receives progress reports.
	Progress ProgressFunc
	// Options are the options of the models of a family registered from a
	// sub-package (recsys/febr takes *febr.Options: λ, early stopping,
	// seed); nil takes the family's defaults, and the other models ignore
	// them.
	Options Options
	// Extra holds the named hyper-parameters of models registered from
	// sub-packages (recsys/mf: "lambda", "alpha", "lr", "epochs", …); each
	// such model documents its keys and takes its defaults for missing
	// ones. For them K is the main parameter too (the number of factors).
	Extra map[string]float64
}

// Options are the options of a model family registered from a
// sub-package (Params.Options), beyond the hyper-parameters every model
// shares. Each family documents the type its models take (a pointer to
// its own struct, which implements Family), so that another value is a
// type error rather than options silently ignored.
type Options interface {
	// Family names the family the options are for ("febr"), for the
	// errors of a model given another family's options.
	Family() string
}

// Defaults for Params.
const (
	DefaultK  = 50
	DefaultL1 = 1.0
	DefaultL2 = 1.0
)

// WithDefaults is p with the defaults of its zero fields filled in, as
// every fit of this package takes it: K, L1 and L2, Tol and MaxIter.
func (p Params) WithDefaults() Params {
	if p.K <= 0 {
		p.K = DefaultK
	}
	if p.L1 == 0 && p.L2 == 0 {
		p.L1, p.L2 = DefaultL1, DefaultL2
	}
	if p.Tol <= 0 {
		p.Tol = 1e-4
	}
	if p.MaxIter <= 0 {
		p.MaxIter = 50
	}
	return p
}

// registry holds every kind by name, starting with the built-in ones,
// each of which declares its grid beside its code (itemp.go, userp.go,
// kunn.go, slim.go, ease.go, rp3beta.go); recommenders lists the
// recommenders in report order, the built-in ones first, then the
// sub-packages' in the order they register.
var (
	registry = map[string]Kind{
		PopularModel: {New: func() Model { return &Popular{} }, Service: defaultAuto.costing(popularTime, popularMemory)},
		"itemknn":    {New: func() Model { return &ItemP{name: "itemknn"} }, Candidates: itemKCandidates("itemknn"), PointCost: itemListPoint, Service: similar(1).costing(itemknnTime, itemPMemory).keeping(itemPKept)},
		"userknn":    {New: func() Model { return &UserP{name: "userknn"} }, Candidates: userKCandidates("userknn"), PointCost: userListPoint, Service: defaultAuto.costing(userknnTime, userPMemory)},
		"kunn":       {New: func() Model { return &KUNN{} }, Candidates: kunnCandidates, PointCost: kunnPoint, Service: similar(4).costing(kunnTime, kunnMemory)},
		"kunn-i":     {New: func() Model { return &ItemP{name: "kunn-i"} }, Candidates: itemKCandidates("kunn-i"), PointCost: itemListPoint, Service: similar(3).costing(kunnITime, itemPMemory).keeping(itemPKept)},
		"kunn-u":     {New: func() Model { return &UserP{name: "kunn-u"} }, Candidates: userKCandidates("kunn-u"), PointCost: userListPoint, Service: defaultAuto.costing(kunnUTime, userPMemory)},
		"slim":       {New: func() Model { return &ItemP{name: "slim"} }, Candidates: slimCandidates, FitGrid: slimFitGrid, PointCost: slimPoint, GridCost: slimGrid, Service: slimService.costing(slimTime, slimMemory)},
		"ease":       {New: func() Model { return &EASE{} }, Candidates: easeCandidates, FitGrid: easeFitGrid, PointCost: easePoint, GridCost: easeGrid, Service: easeServiceWithCost()},
		"rp3beta":    {New: func() Model { return &RP3Beta{} }, Candidates: rp3Candidates, FitGrid: rp3FitGrid, PointCost: rp3Point, GridCost: rp3Grid, Service: Service{Auto: true}.costing(rp3betaTime, rp3betaMemory)},
	}
	recommenders = []string{PopularModel, "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "ease", "rp3beta"}
)

// defaultAuto is the service's use of the built-in neighbourhood models
// and the popularity baseline: trained by default and compared in auto
// mode.
var defaultAuto = Service{Default: true, Auto: true}

// costing is s with the Cost of time law t and memory formula memory
// (CostModel).
func (s Service) costing(t TimeLaw, memory func(Shape) (int64, string)) Service {
	s.Cost = CostModel(t, memory)
	return s
}

// keeping is s with the Kept of its Cost given by kept.
func (s Service) keeping(kept func(Shape) int64) Service {
	c := s.Cost
	s.Cost = func(sh Shape) Cost {
		out := c(sh)
		out.Kept = kept(sh)
		return out
	}
	return s
}

// easeServiceWithCost is easeService with easeCost, which scales its time
// by the items.
func easeServiceWithCost() Service {
	s := easeService
	s.Cost = easeCost
	return s
}

// similar is defaultAuto for a model whose item lists answer similar items
// at preference rank when the active model has none: itemknn's cosine
// lists first, then slim's, kunn-i's and kunn's.
func similar(rank int) Service {
	s := defaultAuto
	s.SimilarRank = rank
	return s
}

// slimService tries two fsSLIM pairs at every k: the default (1, 1) and
// a weaker ℓ1 (0.1, 1), the service's shorter grid.
var slimService = func() Service {
	s := similar(2)
	s.Grid = Grid{SLIM: [][2]float64{{1, 1}, {0.1, 1}}}
	return s
}()

// PopularModel is the name of the popularity baseline, which also answers
// every request that no fitted recommender can.
const PopularModel = "popular"

// New returns an unfitted model by name: popular, itemknn (item-p, cosine),
// userknn (user-p, cosine), kunn (Eq. 4.4), kunn-i and kunn-u (item-p and
// user-p with the KUNN affinities of Eqs. 4.5–4.6), slim (fsSLIM), ease
// (Steck 2019) or rp3beta (Paudel et al. 2017).
func New(name string) (Model, error) {
	k, err := KindOf(name)
	if err != nil {
		return nil, err
	}
	return k.New(), nil
}

// Load decodes a model written by MarshalBinary, whatever its name.
func Load(data []byte) (Model, error) {
	name, err := peekName(data)
	if err != nil {
		return nil, err
	}
	m, err := New(name)
	if err != nil {
		return nil, err
	}
	if err := m.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return m, nil
}

// ParamsOf reports the hyper-parameters a fitted model uses, for reports.
// Models of other packages report theirs with a Params method.
func ParamsOf(m Model) map[string]float64 {
	if pm, ok := m.(interface{ Params() map[string]float64 }); ok {
		return pm.Params()
	}
	switch m := m.(type) {
	case *ItemP:
		p := map[string]float64{"k": float64(m.k)}
		if m.name == "slim" {
			p["l1"], p["l2"] = m.l1, m.l2
		}
		if m.halfLife > 0 {
			p[HalfLifeKey] = m.halfLife
		}
		return p
	case *UserP:
		p := map[string]float64{"k": float64(m.k)}
		if m.halfLife > 0 {
			p[HalfLifeKey] = m.halfLife
		}
		return p
	case *KUNN:
		p := map[string]float64{"k": float64(m.k)}
		if m.halfLife > 0 {
			p[HalfLifeKey] = m.halfLife
		}
		return p
	}
	return map[string]float64{}
}

// clearScores zeroes scores, the start of every scorer.
func clearScores(scores []float64) {
	clear(scores)
}

// FillScores zeroes scores and lets score add into a buffer of the fitted
// item count n: scores itself when it is long enough, else a temporary
// whose prefix is copied back. It is how a model fitted on n items fills
// Score's scores, whatever their length (items past n score 0).
func FillScores(scores []float64, n int, score func(buf []float64)) {
	clear(scores)
	if len(scores) >= n {
		score(scores[:n])
		return
	}
	buf := make([]float64, n)
	score(buf)
	copy(scores, buf)
}
