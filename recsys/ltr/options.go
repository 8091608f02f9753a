package ltr

import (
	"fmt"
	"math"
)

// Measure is the ranking measure whose swap differences |ΔZ_ij| scale the
// λ-gradients and by which the validation set picks the number of trees.
type Measure uint8

const (
	// ADG is the Average Discounted Gain of dissertation Def. 4.2,
	// (1/|R⁺u|) Σ_{i⁺} 1/log2(rank(i⁺)+2), the measure of the product.
	ADG Measure = iota
	// NDCG is the binary NDCG truncated at Options.K (the whole list when
	// K is 0), as recsys/metrics computes it.
	NDCG
)

func (m Measure) String() string {
	switch m {
	case ADG:
		return "adg"
	case NDCG:
		return "ndcg"
	}
	return fmt.Sprintf("Measure(%d)", uint8(m))
}

// Options are the hyper-parameters of Train. A zero field takes the
// default named in its comment.
type Options struct {
	Trees        int     // the most trees to fit (default 500)
	LearningRate float64 // shrinkage η of every leaf value (default 0.1)
	MaxLeaves    int     // leaves per tree, grown best-first (default 31)
	MaxDepth     int     // depth limit of a tree (default 0: none)
	MinLeaf      int     // fewest training rows in a leaf (default 20)
	Bins         int     // quantile bins per feature, 2 to 256 (default 64)
	BinSample    int     // rows sampled to place the bins (default 200000; all when fewer)
	Sigma        float64 // σ of the pairwise logistic (default 1)
	L2           float64 // added to every leaf's Σw (default 0: Burges' Newton step)

	Measure Measure // the gain discount and the validation measure (default ADG)
	K       int     // the NDCG cutoff (default 0: none); only with NDCG

	// Patience stops training once this many trees have not improved the
	// validation measure (default 30). Without validation queries every
	// tree is fitted.
	Patience int
	Seed     uint64 // seeds the sample of the bins
}

// Defaults of the zero fields of Options.
const (
	DefaultTrees        = 500
	DefaultLearningRate = 0.1
	DefaultMaxLeaves    = 31
	DefaultMinLeaf      = 20
	DefaultBins         = 64
	DefaultBinSample    = 200000
	DefaultSigma        = 1
	DefaultPatience     = 30
)

// withDefaults returns o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&o.Trees, DefaultTrees)
	set(&o.MaxLeaves, DefaultMaxLeaves)
	set(&o.MinLeaf, DefaultMinLeaf)
	set(&o.Bins, DefaultBins)
	set(&o.BinSample, DefaultBinSample)
	set(&o.Patience, DefaultPatience)
	if o.LearningRate == 0 {
		o.LearningRate = DefaultLearningRate
	}
	if o.Sigma == 0 {
		o.Sigma = DefaultSigma
	}
	return o
}

// Validate reports the first option out of range, after defaults.
func (o Options) Validate() error {
	o = o.withDefaults()
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case o.Trees < 1:
		return fmt.Errorf("ltr: trees %d, want at least 1", o.Trees)
	case !finitePos(o.LearningRate):
		return fmt.Errorf("ltr: learning rate %v, want a positive finite value", o.LearningRate)
	case o.MaxLeaves < 2:
		return fmt.Errorf("ltr: max leaves %d, want at least 2", o.MaxLeaves)
	case o.MaxDepth < 0:
		return fmt.Errorf("ltr: max depth %d, want 0 (none) or more", o.MaxDepth)
	case o.MinLeaf < 1:
		return fmt.Errorf("ltr: min leaf %d, want at least 1", o.MinLeaf)
	case o.Bins < 2 || o.Bins > maxBins:
		return fmt.Errorf("ltr: bins %d, want 2 to %d", o.Bins, maxBins)
	case o.BinSample < 1:
		return fmt.Errorf("ltr: bin sample %d, want at least 1", o.BinSample)
	case !finitePos(o.Sigma):
		return fmt.Errorf("ltr: sigma %v, want a positive finite value", o.Sigma)
	case !(o.L2 >= 0) || math.IsInf(o.L2, 0):
		return fmt.Errorf("ltr: l2 %v, want a finite value of 0 or more", o.L2)
	case o.Measure > NDCG:
		return fmt.Errorf("ltr: unknown measure %d", o.Measure)
	case o.K < 0:
		return fmt.Errorf("ltr: cutoff k %d, want 0 (none) or more", o.K)
	case o.K > 0 && o.Measure != NDCG:
		return fmt.Errorf("ltr: cutoff k %d is for the ndcg measure, not %s", o.K, o.Measure)
	case o.Patience < 1:
		return fmt.Errorf("ltr: patience %d, want at least 1", o.Patience)
	}
	return nil
}
