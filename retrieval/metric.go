package retrieval

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Metric is a learned Mahalanobis distance d(x,y) = ‖Lᵀ(z(x) − z(y))‖² =
// (z(x)−z(y))ᵀ W (z(x)−z(y)) with W = LLᵀ (dissertation §1.1), over
// features standardised by the training statistics z(x)_i = (x_i − Mean_i) /
// Scale_i. Items are stored projected, Lᵀz(x), so that a distance costs
// O(m) instead of O(d²). A Metric is read-only once learned and safe for
// concurrent use.
type Metric struct {
	// Method is the learner that produced it ("euclidean", "frml", ...).
	Method string
	// Mean and Scale are the z-scoring statistics of the training features.
	Mean, Scale []float64
	// L is the d×m factor of W.
	L *mat.Dense
}

// Dim is d, the number of input features.
func (m *Metric) Dim() int { return len(m.Mean) }

// Rank is m, the dimension of projected vectors.
func (m *Metric) Rank() int {
	_, r := m.L.Dims()
	return r
}

// W returns the d×d metric LLᵀ.
func (m *Metric) W() *mat.SymDense {
	d := m.Dim()
	w := mat.NewSymDense(d, nil)
	w.SymOuterK(1, m.L)
	return w
}

// Project returns Lᵀz(x). A NaN feature (missing) counts as the training
// mean, i.e. contributes nothing.
func (m *Metric) Project(x []float64) ([]float64, error) {
	out := make([]float64, m.Rank())
	return out, m.ProjectTo(out, x)
}

// ProjectTo writes Lᵀz(x) into dst (length Rank()).
func (m *Metric) ProjectTo(dst, x []float64) error {
	if len(x) != m.Dim() {
		return fmt.Errorf("retrieval: feature vector of length %d, metric expects %d", len(x), m.Dim())
	}
	if len(dst) != m.Rank() {
		return fmt.Errorf("retrieval: projection buffer of length %d, want %d", len(dst), m.Rank())
	}
	for k := range dst {
		dst[k] = 0
	}
	for i, v := range x {
		if math.IsNaN(v) {
			continue
		}
		if math.IsInf(v, 0) {
			return errors.New("retrieval: infinite feature value")
		}
		z := zscore(v, m.Mean[i], m.Scale[i])
		if z == 0 {
			continue
		}
		row := m.L.RawRowView(i)
		for k, l := range row {
			dst[k] += z * l
		}
	}
	return nil
}

// ProjectAll projects every row of xs.
func (m *Metric) ProjectAll(xs [][]float64) ([][]float64, error) {
	out := make([][]float64, len(xs))
	for i, x := range xs {
		p, err := m.Project(x)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out[i] = p
	}
	return out, nil
}

// Distance is the squared learned distance between two feature vectors.
func (m *Metric) Distance(x, y []float64) (float64, error) {
	px, err := m.Project(x)
	if err != nil {
		return 0, err
	}
	py, err := m.Project(y)
	if err != nil {
		return 0, err
	}
	return SqDist(px, py), nil
}

// SqDist is ‖a − b‖² summed coordinate by coordinate: the distance of
// Metric.Distance, of HeldOutMAP and of the offline evaluation. The search
// sums four coordinates at a time (SquaredDistance), which may differ in
// the last bits.
func SqDist(a, b []float64) float64 {
	s := 0.0
	for k, v := range a {
		t := v - b[k]
		s += t * t
	}
	return s
}

// Standardization returns per-feature mean and standard deviation of xs
// (a constant feature gets scale 1), skipping NaNs and infinities. Both are
// finite for any finite input: a feature whose sums overflow (values near
// ±1e308) is measured again in units of its largest magnitude.
func Standardization(xs [][]float64) (mean, scale []float64, err error) {
	if len(xs) == 0 {
		return nil, nil, errors.New("retrieval: no vectors")
	}
	d := len(xs[0])
	mean, scale = make([]float64, d), make([]float64, d)
	count := make([]float64, d)
	for i, x := range xs {
		if len(x) != d {
			return nil, nil, fmt.Errorf("retrieval: vector %d has length %d, want %d", i, len(x), d)
		}
		for j, v := range x {
			if isFinite(v) {
				mean[j] += v
				count[j]++
			}
		}
	}
	for j := range mean {
		if count[j] > 0 {
			mean[j] /= count[j]
		}
	}
	for _, x := range xs {
		for j, v := range x {
			if isFinite(v) {
				scale[j] += (v - mean[j]) * (v - mean[j])
			}
		}
	}
	for j := range scale {
		if count[j] > 1 {
			scale[j] = math.Sqrt(scale[j] / (count[j] - 1))
		}
		if !isFinite(mean[j]) || math.IsInf(scale[j], 0) {
			mean[j], scale[j] = rescaledMoments(xs, j)
		}
		if scale[j] == 0 || math.IsNaN(scale[j]) {
			scale[j] = 1
		}
	}
	return mean, scale, nil
}

// rescaledMoments is the mean and standard deviation of feature j computed
// on v/M, M its largest magnitude, so no sum overflows; the standard
// deviation is capped at MaxFloat64 (it can exceed it by up to √2 when the
// values span ±MaxFloat64).
func rescaledMoments(xs [][]float64, j int) (mean, sd float64) {
	var top, count float64
	for _, x := range xs {
		if v := x[j]; isFinite(v) {
			top = max(top, math.Abs(v))
			count++
		}
	}
	if top == 0 {
		return 0, 0
	}
	for _, x := range xs {
		if v := x[j]; isFinite(v) {
			mean += v / top
		}
	}
	mean /= count
	for _, x := range xs {
		if v := x[j]; isFinite(v) {
			sd += (v/top - mean) * (v/top - mean)
		}
	}
	if count > 1 {
		sd = math.Sqrt(sd / (count - 1))
	}
	return mean * top, min(sd*top, math.MaxFloat64)
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// zMax bounds a standardised value. A training row lies within √n standard
// deviations of the mean, so the bound only ever touches a query or a later
// item far outside the training range, and it keeps every projection and
// distance finite: |Lᵀz|ᵢ ≤ d·zMax·max|L|.
const zMax = 1e12

// zscore is (v − mean)/scale clamped to ±zMax, without overflow: when
// v − mean leaves the float range (v and mean near ±MaxFloat64 with
// opposite signs) it is computed as v/scale − mean/scale.
func zscore(v, mean, scale float64) float64 {
	d := v - mean
	z := d / scale
	if math.IsInf(d, 0) && !math.IsInf(v, 0) {
		z = v/scale - mean/scale
	}
	return max(-zMax, min(zMax, z))
}

// Standardize returns the n×d matrix of z-scored rows (NaN → 0).
func Standardize(xs [][]float64, mean, scale []float64) *mat.Dense {
	d := len(mean)
	out := mat.NewDense(len(xs), d, nil)
	for i, x := range xs {
		row := out.RawRowView(i)
		for j, v := range x {
			if !math.IsNaN(v) {
				row[j] = zscore(v, mean[j], scale[j])
			}
		}
	}
	return out
}

// Euclidean is the baseline metric W = I over standardised features.
func Euclidean(mean, scale []float64) *Metric {
	d := len(mean)
	l := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		l.Set(i, i, 1)
	}
	return &Metric{Method: MethodEuclidean, Mean: mean, Scale: scale, L: l}
}
