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
		z := (v - m.Mean[i]) / m.Scale[i]
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
// (a constant feature gets scale 1), skipping NaNs.
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
			if !math.IsNaN(v) {
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
			if !math.IsNaN(v) {
				scale[j] += (v - mean[j]) * (v - mean[j])
			}
		}
	}
	for j := range scale {
		if count[j] > 1 {
			scale[j] = math.Sqrt(scale[j] / (count[j] - 1))
		}
		if scale[j] == 0 || math.IsNaN(scale[j]) {
			scale[j] = 1
		}
	}
	return mean, scale, nil
}

// Standardize returns the n×d matrix of z-scored rows (NaN → 0).
func Standardize(xs [][]float64, mean, scale []float64) *mat.Dense {
	d := len(mean)
	out := mat.NewDense(len(xs), d, nil)
	for i, x := range xs {
		row := out.RawRowView(i)
		for j, v := range x {
			if !math.IsNaN(v) {
				row[j] = (v - mean[j]) / scale[j]
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
