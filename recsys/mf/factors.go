package mf

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

	"github.com/recsys-engine/recsys/recsys"
)

// DefaultFactors is the number of factors when Params.K is 0.
const DefaultFactors = 20

// Bounds that keep a fold-in cheap, also for decoded models.
const (
	maxFactors   = 1024
	maxKappa     = 256
	maxFoldSteps = 20000
)

// factors is the fitted state the three models share: U (nUsers×k) and V
// (nItems×k), row-major, optional item biases, and the hash of every
// training row so that Score recognises an unchanged history.
type factors struct {
	k, nUsers, nItems int
	user, item        []float64
	bias              []float64 // nil, or one per item
	hashes            []uint64  // historyHash of each training row
	index             []hashUser
}

type hashUser struct {
	hash uint64
	user uint32
}

func (f *factors) userVec(u int) []float64 { return f.user[u*f.k : (u+1)*f.k] }

func (f *factors) itemVec(i int) []float64 { return f.item[i*f.k : (i+1)*f.k] }

// init sizes the factor matrices and hashes the training rows.
func (f *factors) init(x *recsys.Matrix, k int, withBias bool) {
	*f = factors{k: k, nUsers: x.Users(), nItems: x.Items()}
	f.user = make([]float64, f.nUsers*k)
	f.item = make([]float64, f.nItems*k)
	if withBias {
		f.bias = make([]float64, f.nItems)
	}
	f.hashes = make([]uint64, f.nUsers)
	for u := range f.nUsers {
		f.hashes[u] = historyHash(x.Row(u))
	}
	f.buildIndex()
}

// buildIndex sorts the users by history hash (then index) for lookups.
func (f *factors) buildIndex() {
	f.index = make([]hashUser, len(f.hashes))
	for u, h := range f.hashes {
		f.index[u] = hashUser{h, uint32(u)}
	}
	slices.SortFunc(f.index, func(a, b hashUser) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		return cmp.Compare(a.user, b.user)
	})
}

// historyHash is FNV-1a over the item indices and the length.
func historyHash(h []uint32) uint64 {
	const prime = 1099511628211
	s := uint64(14695981039346656037)
	for _, i := range h {
		for b := 0; b < 32; b += 8 {
			s ^= uint64(byte(i >> b))
			s *= prime
		}
	}
	s ^= uint64(len(h))
	s *= prime
	return s
}

// known returns the fitted user whose training row is history: self when
// its row matches, else the first user with that history (−1 if none).
func (f *factors) known(self int, history []uint32) int {
	h := historyHash(history)
	if self >= 0 && self < f.nUsers && f.hashes[self] == h {
		return self
	}
	k, ok := slices.BinarySearchFunc(f.index, h, func(e hashUser, h uint64) int { return cmp.Compare(e.hash, h) })
	if !ok {
		return -1
	}
	return int(f.index[k].user)
}

// clip drops from a sorted history the items the model never saw.
func (f *factors) clip(history []uint32) []uint32 {
	if uint64(f.nItems) > math.MaxUint32 {
		return history
	}
	n, _ := slices.BinarySearch(history, uint32(f.nItems))
	return history[:n]
}

// score writes bias + V·u into scores (zero past the fitted items).
func (f *factors) score(u []float64, scores []float64) {
	clear(scores)
	n := min(len(scores), f.nItems)
	if n == 0 || f.k == 0 {
		if f.bias != nil {
			copy(scores, f.bias[:n])
		}
		return
	}
	beta := 0.0
	if f.bias != nil {
		copy(scores[:n], f.bias[:n])
		beta = 1
	}
	v := blas64.General{Rows: n, Cols: f.k, Stride: f.k, Data: f.item[:n*f.k]}
	blas64.Gemv(blas.NoTrans, 1, v, blas64.Vector{N: f.k, Inc: 1, Data: u}, beta, blas64.Vector{N: n, Inc: 1, Data: scores[:n]})
}

// scoreUser is Score for every model: the fitted factor of an unchanged
// training history, else foldIn's.
func (f *factors) scoreUser(self int, history []uint32, scores []float64, foldIn func([]uint32) []float64) {
	history = f.clip(history)
	if u := f.known(self, history); u >= 0 {
		f.score(f.userVec(u), scores)
		return
	}
	f.score(foldIn(history), scores)
}

// gram returns VᵀV (k×k, dense symmetric) of the rows of a (r×k).
func gram(a []float64, k int) []float64 {
	g := make([]float64, k*k)
	if len(a) == 0 || k == 0 {
		return g
	}
	m := blas64.General{Rows: len(a) / k, Cols: k, Stride: k, Data: a}
	out := blas64.Symmetric{N: k, Stride: k, Uplo: blas.Upper, Data: g}
	blas64.Syrk(blas.Trans, 1, m, 0, out)
	for i := range k {
		for j := range i {
			g[i*k+j] = g[j*k+i]
		}
	}
	return g
}

// gaussian fills a with N(0, sd²) draws.
func gaussian(rng *rand.Rand, a []float64, sd float64) {
	for i := range a {
		a[i] = sd * rng.NormFloat64()
	}
}

// dot is a·b over len(a); gonum's assembly kernel is about twice as fast
// as a plain loop at 50 factors.
func dot(a, b []float64) float64 { return floats.Dot(a, b[:len(a)]) }

// axpy adds alpha·x to y.
func axpy(alpha float64, x, y []float64) { floats.AddScaled(y, alpha, x[:len(y)]) }

// contains reports whether the sorted row holds item.
func contains(row []uint32, item uint32) bool {
	_, ok := slices.BinarySearch(row, item)
	return ok
}

// sigmoid is 1/(1+e^{−x}) without overflow.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// softplus is ln(1+eˣ) without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// extras reads the named hyper-parameters of Params.Extra.
type extras struct {
	m   map[string]float64
	err error
}

func (e *extras) float(key string, def, lo, hi float64) float64 {
	v, ok := e.m[key]
	if !ok {
		return def
	}
	if math.IsNaN(v) || v < lo || v > hi {
		if e.err == nil {
			e.err = fmt.Errorf("mf: %s = %g outside [%g, %g]", key, v, lo, hi)
		}
		return def
	}
	return v
}

func (e *extras) int(key string, def, lo, hi int) int {
	v := e.float(key, float64(def), float64(lo), float64(hi))
	if v != math.Trunc(v) && e.err == nil {
		e.err = fmt.Errorf("mf: %s = %g is not an integer", key, v)
	}
	return int(v)
}

// numFactors is Params.K, or DefaultFactors when it is 0.
func numFactors(p recsys.Params) (int, error) {
	switch {
	case p.K == 0:
		return DefaultFactors, nil
	case p.K < 0 || p.K > maxFactors:
		return 0, fmt.Errorf("mf: %d factors outside [1, %d]", p.K, maxFactors)
	}
	return p.K, nil
}

// foldRNG derives the seed of a user's fold-in from the model seed and the
// history, so that Score is deterministic.
func foldRNG(seed uint64, history []uint32) *rand.Rand {
	return rand.New(rand.NewPCG(seed, historyHash(history)))
}
