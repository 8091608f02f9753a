package recsys

import (
	"context"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// Kind is everything the service knows of one kind of model, registered
// once beside its code (Register): how to make and fit one, how its
// hyper-parameters are searched (dissertation §4.7.3), how it is read back,
// and the service's defaults for it. A recommender has New; a kind that is
// not one (the content metric, recsys/content) has Train and Decode.
type Kind struct {
	// New returns an unfitted recommender; nil for a kind that is not one.
	New func() Model
	// Candidates lists the parameters a search fits and validates, in
	// order: the first of equally good ones is chosen, so smaller values
	// of the main parameter come first. c caps k by the data. nil means
	// one fit with the defaults.
	Candidates func(g Grid, c Caps) []Params
	// Search, when not nil, replaces the one fit per candidate: FEBR
	// builds its features once per k and tunes λ on them. Candidates then
	// lists the fits it makes, for progress and reports.
	Search SearchFunc
	// FitGrid, when not nil, fits every candidate of a search at once,
	// sharing work among them (slim counts each item's Gram matrix once
	// for the whole grid), and returns constructors of the fitted models
	// in the candidates' order: the same models as one Fit per candidate
	// with the warm starts a search passes (WarmStart). They are held
	// together, so the grid's models must fit in memory.
	FitGrid func(ctx context.Context, x *Matrix, cands []Params) ([]func() Model, error)
	// PointCost predicts the wall seconds on 2 cores of one point of the
	// kind's grid search on data of shape s: the fit with p and one
	// validation pass, ranking every item for s.Validated() users
	// (pointcost.go). For a kind with FitGrid it is the point's own share
	// of a batch, and GridCost adds what the batch shares. A search skips
	// the points predicted past its time budget (recsys/eval's
	// Tuning.Deadline), correcting the prediction by the points it has
	// measured. nil: not predicted, never skipped.
	PointCost func(s Shape, p Params) float64
	// GridCost predicts the seconds of the work FitGrid does once for the
	// batch ps (slim's Gram matrices, RP³β's walk); nil: none.
	GridCost func(s Shape, ps []Params) float64

	// Train fits a kind that is not a recommender on a training job's
	// data. It returns nil and the reason, which the job records, when the
	// data cannot support the kind.
	Train func(ctx context.Context, d TrainData) (_ *Trained, skipped string, _ error)
	// Decode reads back the bytes a kind that is not a recommender
	// persisted (Artefact.MarshalBinary); recommenders are read by Load.
	Decode func([]byte) (Artefact, error)

	// Reuses names the kinds whose fits in the same training job this
	// kind can take instead of making them again (FEBRi-slim takes
	// slim's, a FEBR variant its aggsum baselines', febr-blend its
	// bases'); a job fits those first and hands them to Reuse.
	Reuses []string
	Reuse  *Reuse

	// Service holds the service's defaults for the kind.
	Service Service
}

// Service is what the service does with a kind by default.
type Service struct {
	// Default is set on the kinds a training job fits when it names none,
	// Auto on the candidates of an auto job that names none.
	Default, Auto bool
	// Settings are the secondary settings (Params.Extra) the service's
	// grid tries at every main parameter; nil tries the kind's defaults.
	// Offline evaluation searches its own, longer grid.
	Settings []map[string]float64
	// Grid holds the service's values of the kind's other grid
	// dimensions (Grid.SLIM, Factors, Lambda; K and Extra are not read).
	// A training job searches every kind in the union of them, so that
	// febr-blend searches each base in the base's own grid.
	Grid Grid
	// Epochs is the default number of passes over the data of an
	// iterative fit and MinEpochs the fewest that the service's scale
	// rule keeps (jobs.ScalePositives); 0 for a fit without epochs.
	Epochs, MinEpochs int
	// FixedGridAtScale keeps a search on large data to its grid: a choice
	// at an end of the grid is reported, not searched past, because each
	// step past it costs a whole search.
	FixedGridAtScale bool
	// Options, when not nil, are the options (Params.Options) the
	// service's fits of the kind start from, seeded by seed.
	Options func(seed uint64) Options
	// SimilarRank, when positive, offers the kind's item neighbour lists
	// (ItemNeighbourhood) for similar items when the active model has
	// none; the lowest rank served answers.
	SimilarRank int
	// Cost predicts what the service's search and refit of the kind cost
	// on data of a shape, which a training job checks against its
	// training and memory budgets before fitting the kind (package jobs).
	// nil: unknown, never skipped.
	Cost func(Shape) Cost
}

// Shape is the size of a training job's data, which a kind's predicted
// cost depends on.
type Shape struct {
	Users, Items, Positives int
	// Features counts the item features (TrainData.FeatureNames).
	Features int
	// KMax is the largest neighbourhood size of the job's grid (0: 200,
	// the service's), the length of the neighbour lists it caches.
	KMax int
	// ValidationUsers is how many users score each grid point (0: all),
	// the users whose neighbour lists a user model's search memoises.
	ValidationUsers int
	// ActiveItems counts the items with a positive (0: Items), which
	// choose EASE's dense or sparse fit.
	ActiveItems int
}

// active is s.ActiveItems, or Items when it is not set.
func (s Shape) active() int {
	if s.ActiveItems > 0 {
		return s.ActiveItems
	}
	return s.Items
}

// Validated is the number of users validation scores.
func (s Shape) Validated() int {
	if s.ValidationUsers > 0 {
		return min(s.Users, s.ValidationUsers)
	}
	return s.Users
}

// K is s.KMax, or the service's 200 when it is not set, capped by the
// other items: the longest item neighbour list a fit keeps.
func (s Shape) K() int { return s.capK(s.Items) }

// UserK is K for user neighbour lists: capped by the other users.
func (s Shape) UserK() int { return s.capK(s.Users) }

func (s Shape) capK(n int) int {
	k := s.KMax
	if k <= 0 {
		k = 200
	}
	return max(0, min(k, n-1))
}

// Cost is a kind's predicted cost on data of one shape (Service.Cost). A
// zero field is not predicted: a job never skips a kind for it.
type Cost struct {
	// Seconds is the wall time on 2 cores of the service's whole search
	// and refit of the kind.
	Seconds float64
	// Bytes is the peak memory the fit adds to the job's (the snapshot and
	// its matrix are the job's), and Memory says what holds most of it,
	// for the record of a kind skipped for it: "sparse weights of …".
	Bytes  int64
	Memory string
	// Kept is the memory the job holds of the kind once it is fitted,
	// until the job ends (the model served and its persisted bytes), which
	// the kinds fitted after it cannot use; 0 when it is small beside
	// Bytes.
	Kept int64
}

// CostOf is the predicted cost of the kind name on data of shape s
// (Service.Cost); ok is false for a kind without a prediction.
func CostOf(name string, s Shape) (_ Cost, ok bool) {
	k, found := registry[name]
	if !found || k.Service.Cost == nil {
		return Cost{}, false
	}
	return k.Service.Cost(s), true
}

// TimeLaw is a kind's training time as a power law in the positives
// fitted to measurements at one catalogue size: Seconds(P) = At1M ·
// (P/10⁶)^Exponent, At1M the wall seconds at a million positives. Each
// kind names the measurements its constants come from.
type TimeLaw struct{ At1M, Exponent float64 }

// Seconds is the law at positives.
func (l TimeLaw) Seconds(positives int) float64 {
	if positives <= 0 {
		return 0
	}
	return l.At1M * math.Pow(float64(positives)/1e6, l.Exponent)
}

// ListBytes are the bytes of neighbour lists of rows rows of k entries
// (Neighbours: an item index and a float64 value each, 16 bytes with the
// padding), the unit of the memory formulas of the kinds that keep them.
func ListBytes(rows, k int) int64 {
	return int64(rows) * int64(k) * int64(unsafe.Sizeof(Neighbour{}))
}

// Reuse is how a kind takes the fits that the same training job made of
// the kinds it reuses (Kind.Reuses). fits holds those the job made, by
// name; a kind the job did not fit is missing.
type Reuse struct {
	// Search returns the options of the kind's search on the job's
	// validation split h: o (nil: the kind's defaults) with the fits made
	// there. large is set above the service's scale threshold, where a
	// kind may take its bases' choices instead of searching them again.
	Search func(o Options, fits map[string]Fit, h Holdout, large bool) Options
	// Refit returns p, the parameters of the kind's refit on all the data
	// x, with the job's refits there.
	Refit func(p Params, fits map[string]Fit, x *Matrix) Params
}

// Fit is one kind's fits in a training job: the model chosen on the
// validation split (Tuned, fitted with TunedParams on its training
// matrix) and the refit on all the data (Full, with FullParams).
type Fit struct {
	Tuned, Full             Model
	TunedParams, FullParams Params
}

// Holdout is a training job's validation split: the training matrix and
// each user's held-out items.
type Holdout struct {
	Train      *Matrix
	Validation [][]uint32
}

// Artefact is what a fitted kind persists: every Model, and the kinds
// that are not recommenders.
type Artefact interface {
	MarshalBinary() ([]byte, error)
}

// TrainData is what a kind that is not a recommender learns from.
type TrainData struct {
	// X holds the positive pairs, indexed by the store's dense indices.
	X *Matrix
	// FeatureNames names the item features; Features holds each item's
	// values in that order (nil for an item without features).
	FeatureNames []string
	Features     [][]float64
	// Seed seeds whatever the fit draws at random.
	Seed uint64
	// ContentApproxAbove is serving's threshold of approximate content
	// search (0 = retrieval.DefaultApproxAbove, negative = always exact):
	// with more featured items the content model builds its HNSW graph at
	// training and persists it.
	ContentApproxAbove int
	// Enter, when not nil, is called with the name of each stage of the
	// fit as it starts, for the job's progress.
	Enter func(stage string)
}

// Trained is a fit of a kind that is not a recommender.
type Trained struct {
	Model Artefact
	// Items counts the items it learnt from.
	Items int
	// Params are the figures of the fit that the model's record shows.
	Params map[string]float64
}

// others lists the kinds that are not recommenders in registration order;
// registry and recommenders (models.go) start with the built-in kinds.
var others []string

// Register adds a model kind to the registry under name, so that New,
// Load, Decode, the hyper-parameter search, training and every list of
// models (training, evaluation, ?model=) know it. The built-in
// recommenders register in models.go; sub-packages (recsys/mf,
// recsys/febr, recsys/content) call it from init. It is not safe to call
// once the registry is in use, and it panics on a programming error: an
// empty or taken name, or a kind that is neither a recommender (New) nor
// a kind the service can train and read back (Train and Decode).
func Register(name string, k Kind) {
	switch {
	case name == "":
		panic("recsys: Register with an empty name")
	case k.New == nil && (k.Train == nil || k.Decode == nil), k.New != nil && (k.Train != nil || k.Decode != nil):
		panic(fmt.Sprintf("recsys: kind %q needs either New or both Train and Decode", name))
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("recsys: model %q registered twice", name))
	}
	registry[name] = k
	if k.New != nil {
		recommenders = append(recommenders, name)
	} else {
		others = append(others, name)
	}
}

// KindOf returns the registered kind of a model name.
func KindOf(name string) (Kind, error) {
	k, ok := registry[name]
	if !ok {
		return Kind{}, fmt.Errorf("recsys: unknown model %q", name)
	}
	return k, nil
}

// Known reports whether name is a registered kind.
func Known(name string) bool {
	_, ok := registry[name]
	return ok
}

// Names lists the recommenders in report order.
func Names() []string { return slices.Clone(recommenders) }

// Kinds lists every registered kind: the recommenders in report order,
// then the other kinds.
func Kinds() []string { return slices.Concat(recommenders, others) }

// Recommends reports whether name is a registered recommender: a model
// that ranks items for a user, which evaluations, activation and ?model=
// accept.
func Recommends(name string) bool {
	k, ok := registry[name]
	return ok && k.New != nil
}

// Defaults lists the kinds a training job fits when it names none
// (Service.Default), in Kinds' order.
func Defaults() []string { return kindsWhere(func(k Kind) bool { return k.Service.Default }) }

// AutoNames lists the recommenders an auto job adds to the server's
// models when it names none (Service.Auto), in Kinds' order.
func AutoNames() []string { return kindsWhere(func(k Kind) bool { return k.Service.Auto }) }

// SimilarFallbacks lists the kinds with a SimilarRank, lowest first.
func SimilarFallbacks() []string {
	out := kindsWhere(func(k Kind) bool { return k.Service.SimilarRank > 0 })
	slices.SortStableFunc(out, func(a, b string) int { return registry[a].Service.SimilarRank - registry[b].Service.SimilarRank })
	return out
}

func kindsWhere(keep func(Kind) bool) []string {
	var out []string
	for _, n := range Kinds() {
		if keep(registry[n]) {
			out = append(out, n)
		}
	}
	return out
}

// Decode reads the persisted bytes of the model called name: by its
// kind's Decode, or, for a recommender, by Load, which finds the model in
// the bytes' header.
func Decode(name string, blob []byte) (Artefact, error) {
	k, ok := registry[name]
	if ok && k.Decode != nil {
		return k.Decode(blob)
	}
	m, err := Load(blob)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// AppendHeader appends the header every encoded model starts with (the
// format version byte and the model name), which Load reads to pick the
// model kind. Models of other packages begin MarshalBinary with it.
func AppendHeader(b []byte, name string) []byte {
	return append(b, newEncoder(name).Bytes()...)
}

// ReadHeader checks that data starts with the header of model name and
// returns the bytes after it.
func ReadHeader(data []byte, name string) ([]byte, error) {
	d := newDecoder(data, name)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return d.Rest(), nil
}

// CostModel is a kind's Service.Cost from its time law and its memory
// formula, which returns the bytes and what holds them.
func CostModel(t TimeLaw, memory func(Shape) (int64, string)) func(Shape) Cost {
	return func(s Shape) Cost {
		b, what := memory(s)
		return Cost{Seconds: t.Seconds(s.Positives), Bytes: b, Memory: what}
	}
}

// FormatCount is n with thousands separators ("1,000,000"), as the
// descriptions of costs write counts.
func FormatCount(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for k := range len(s) {
		if k > 0 && (len(s)-k)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[k])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
