package febr

import (
	"fmt"

	"github.com/recsys-engine/recsys/recsys"
)

// Options configure FEBR and febr-blend: a fit or search takes them as
// recsys.Params.Options (nil: the defaults). Zero values take the
// defaults.
type Options struct {
	// Lambda is the ℓ2 constant λ on θ (§4.6); 0 means DefaultLambda.
	Lambda float64
	// Gamma is the WARP cut-off γ of Algorithm 4.2: at most ⌈(|I|−1)/γ⌉
	// draws per iteration; 0 means 50 (§4.7.3).
	Gamma float64
	// LearningRate is the SGD step η; 0 means DefaultLearningRate.
	LearningRate float64
	// MaxIterations caps OPT-ADG; 0 means 2×10⁶ (§4.7.3).
	MaxIterations int
	// Validation, when set, holds per user of the training matrix the
	// held-out items (sorted, not in the user's training row) whose ADG
	// decides early stopping: it is evaluated every EvalEvery iterations
	// and training stops after Patience evaluations without improvement,
	// keeping the best θ. Without it, OPT-ADG runs Iterations iterations.
	Validation [][]uint32
	// EvalEvery (0: DefaultEvalEvery) and Patience (0:
	// DefaultPatience) control early stopping.
	EvalEvery, Patience int
	// Iterations is the number of iterations without Validation (0:
	// DefaultIterations; negative: none, θ stays the aggsum
	// predictor); a search reports the iteration count of its best θ
	// (Info) so that a refit on all the data can reuse it.
	Iterations int
	// Seed seeds OPT-ADG; the same seed gives the same model.
	Seed uint64
	// MemoryBudget bounds the feature memo in bytes (0: DefaultMemory;
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
	// a search with Grid.KByBaseline it must be the choice of a slim
	// search on the same matrix, grid and validation items (eval.Tune's),
	// whose k and (ℓ1, ℓ2) the search then takes.
	SLIM recsys.Model
	// Baselines, in a search with Grid.KByBaseline, may hold the
	// choices of the searches of the variant's baselines (VariantInfo)
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
	Baselines []recsys.Model
	// Blend configures febr-blend (blend.go); nil takes its defaults.
	Blend *BlendOptions
}

// Defaults of Options.
const (
	DefaultLambda       = 1e-3
	DefaultGamma        = 50
	DefaultLearningRate = 0.001
	DefaultMaxIter      = 2_000_000
	DefaultEvalEvery    = 20_000
	DefaultPatience     = 5
	DefaultIterations   = 100_000
	DefaultMemory       = 2 << 30
)

// Family implements recsys.Options: FEBR's models take *Options.
func (*Options) Family() string { return "febr" }

// optionsIn is p.Options as FEBR's, nil when p has none; options of
// another family are an error.
func optionsIn(p recsys.Params) (*Options, error) {
	o, ok := p.Options.(*Options)
	if !ok && p.Options != nil {
		return nil, fmt.Errorf("febr: options of %s given to a FEBR model", p.Options.Family())
	}
	return o, nil
}

// optionsOf is the Options of a fit or search, p.Options with the
// defaults of its zero fields (all of them when p has none).
func optionsOf(p recsys.Params) (Options, error) {
	o, err := optionsIn(p)
	return o.withDefaults(), err
}

// withDefaults is *in (nil: the zero Options) with the defaults of its zero
// fields.
func (in *Options) withDefaults() Options {
	var o Options
	if in != nil {
		o = *in
	}
	if o.Lambda == 0 {
		o.Lambda = DefaultLambda
	}
	if o.Gamma <= 0 {
		o.Gamma = DefaultGamma
	}
	if o.LearningRate <= 0 {
		o.LearningRate = DefaultLearningRate
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = DefaultMaxIter
	}
	if o.EvalEvery <= 0 {
		o.EvalEvery = DefaultEvalEvery
	}
	if o.Patience <= 0 {
		o.Patience = DefaultPatience
	}
	if o.Iterations == 0 {
		o.Iterations = DefaultIterations
	}
	if o.MemoryBudget == 0 {
		o.MemoryBudget = DefaultMemory
	}
	return o
}

func (o Options) optConfig(progress recsys.ProgressFunc) optConfig {
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
