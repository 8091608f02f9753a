package febr

import "math"

// The aggregators of dissertation §4.5.2, in feature order, followed by the
// missing-feature indicator b of §4.5.4. Each side (item, user) of a
// representation contributes these seven features.
const (
	aggMean = iota
	aggStd
	aggMin
	aggMax
	aggLen
	aggSum
	aggMissing
	featuresPerSide
)

// featureNames label the features of one side, for reports and tests.
var featureNames = [featuresPerSide]string{"mean", "std", "min", "max", "len", "sum", "missing"}

// sideAcc accumulates, densely over items, the entries of the affinity
// vectors φ(u, i) of one side for one user: their count, sum, sum of
// squares, minimum and maximum. An item's five sums sit together (aggOf,
// 40 bytes), so an entry costs one or two cache lines, not five.
type sideAcc []aggOf

func newSideAcc(n int) sideAcc { return make(sideAcc, n) }

// add adds v to item i's entries and reports whether it is the first.
func (a sideAcc) add(i uint32, v float64) bool {
	first := a[i].n == 0
	a[i].add(v)
	return first
}

// features writes the seven features of item i into out and clears the
// item's entry: [aggmean, aggstd, aggmin, aggmax, agglen, aggsum, b]
// (§4.5.2, §4.5.4), with agglen = |active|/k and, when the active set is
// empty, all aggregates 0 and b = 1. aggstd is the population standard
// deviation; a variance within rounding error of 0 (equal entries) is 0.
func (a sideAcc) features(i uint32, k int, out []float64) {
	a[i].write(k, out)
	a[i].n = 0
}

// aggOf accumulates the entries of one pair's active set: an item of a
// sideAcc, or one pair alone (extractor.pair), which adds them in the
// order extract does, so that its features are the same to the bit.
type aggOf struct {
	n       int32
	sum, sq float64
	lo, hi  float64
}

func (a *aggOf) add(v float64) {
	if a.n == 0 {
		a.n, a.sum, a.sq, a.lo, a.hi = 1, v, v*v, v, v
		return
	}
	a.n++
	a.sum += v
	a.sq += v * v
	a.lo = min(a.lo, v)
	a.hi = max(a.hi, v)
}

// write writes the seven features of the active set into out
// (sideAcc.features).
func (a *aggOf) write(k int, out []float64) {
	if a.n == 0 {
		clear(out[:aggMissing])
		out[aggMissing] = 1
		return
	}
	fc := float64(a.n)
	mean := a.sum / fc
	ms := a.sq / fc
	v := ms - mean*mean
	if v <= 1e-12*ms || a.lo == a.hi {
		v = 0
	}
	out[aggMean] = mean
	out[aggStd] = math.Sqrt(v)
	out[aggMin] = a.lo
	out[aggMax] = a.hi
	out[aggLen] = fc / float64(k)
	out[aggSum] = a.sum
	out[aggMissing] = 0
}

// featureStats returns the mean and standard deviation of every feature
// over the non-missing pairs (u, i) of the training matrix, training
// pairs included. A feature that does not vary gets std 1.
type featureStats struct {
	n       float64
	sum, sq []float64
}

func newFeatureStats(dim int) *featureStats {
	return &featureStats{sum: make([]float64, dim), sq: make([]float64, dim)}
}

func (s *featureStats) add(raw []float64) {
	s.n++
	for f, v := range raw {
		s.sum[f] += v
		s.sq[f] += v * v
	}
}

func (s *featureStats) merge(o *featureStats) {
	s.n += o.n
	for f := range s.sum {
		s.sum[f] += o.sum[f]
		s.sq[f] += o.sq[f]
	}
}

func (s *featureStats) meanStd() (mean, std []float64) {
	dim := len(s.sum)
	mean, std = make([]float64, dim), make([]float64, dim)
	for f := range dim {
		std[f] = 1
		if s.n == 0 {
			continue
		}
		mean[f] = s.sum[f] / s.n
		v := s.sq[f]/s.n - mean[f]*mean[f]
		// Relative to the scale of the feature, a variance this small is
		// rounding error: the feature is constant.
		if v > 1e-12*max(1, s.sq[f]/s.n) {
			std[f] = math.Sqrt(v)
		}
	}
	return mean, std
}

// dot is θ·z.
func dot(theta []float64, z []float64) float64 {
	s := 0.0
	for f, v := range z {
		s += theta[f] * v
	}
	return s
}
