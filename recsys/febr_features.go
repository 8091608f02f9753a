package recsys

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

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
// sideAcc, or one pair alone (febrExtractor.pair), which adds them in the
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

// febrView is one user's side of the pair features φ(u, i), from which
// febrExtractor.pair computes the features of single items on demand
// instead of the user's whole block: the history as a bitset and, for the
// user side, KNN(u). OPT-ADG looks at a few items of a drawn user, and at
// 10⁵ users a block costs ~10⁴ times one pair.
//
// The user side is accumulated when the view is prepared, for the items
// the step will look at alone (lookAt: its positive and the negatives it
// may draw, drawn ahead), over the rows of KNN(u) in its order as extract
// does: views are prepared in parallel, while OPT-ADG's steps run
// serially, and a pair's user side looked up there costs one read instead
// of a binary search in each of the k neighbours' rows (at
// MovieLens-20M's shape, ~200 of febr-iu-cosine's 1,118 CPU s before).
// Accumulating every item of those rows instead cost each of the four
// user-side variants ~130 CPU s at 20M events, for the ~1% of the items a
// step looks at.
type febrView struct {
	hist    []uint64 // the history, a bit per item
	ex      []uint64 // the items OPT-ADG does not draw as negatives: hist and the held-out positives
	self    int      // the row of the training matrix the view is of (extract's self)
	nbs     []Neighbour
	look    []uint64 // the items the user side is accumulated for
	users   []aggOf  // per item, O⁺i ∩ KNN(u) accumulated; zero outside touched
	touched []uint32 // the items with a non-zero entry in users
	// The step's draws, made with the view (optADG): the positive i⁺
	// and, in order, the negatives it may look at.
	pos  uint32
	negs []uint32
}

func setBit(b []uint64, i uint32)      { b[i/64] |= 1 << (i % 64) }
func hasBit(b []uint64, i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// view prepares v for the user with the given history (sorted, deduplicated,
// items < nItems), row self of the training matrix as in extract, and
// also excluding the items of extra from the negatives: the bitsets.
// lookAt then finds KNN(u) and accumulates the user side of the items a
// step looks at (not needed with the memo).
func (e *febrExtractor) view(v *febrView, self int, history, extra []uint32) {
	words := (e.nItems + 63) / 64
	v.hist, v.ex = grow(v.hist, words), grow(v.ex, words)
	for _, i := range history {
		setBit(v.hist, i)
		setBit(v.ex, i)
	}
	for _, i := range extra {
		setBit(v.ex, i)
	}
	v.nbs = v.nbs[:0]
	for _, i := range v.touched {
		v.users[i] = aggOf{}
	}
	v.touched = v.touched[:0]
	v.self = self
}

// lookAt finds KNN(u) of the view's user (history as given to view) and
// accumulates its user side for the items its step looks at (v.pos and v.negs; repeats allowed), as extract does for
// them (Cor. 4.1: item i's active users are the neighbours whose rows hold
// it, in the order of KNN(u)); pair may then be asked for these items
// alone. Once per view.
func (e *febrExtractor) lookAt(v *febrView, history []uint32) {
	if e.users == nil {
		return
	}
	sc := e.pool.Get().(*febrScratch)
	v.nbs = append(v.nbs, e.users.neighbours(v.self, history, &sc.user)...)
	e.pool.Put(sc)
	v.look = grow(v.look, (e.nItems+63)/64)
	setBit(v.look, v.pos)
	for _, i := range v.negs {
		setBit(v.look, i)
	}
	if len(v.users) != e.nItems {
		v.users = make([]aggOf, e.nItems)
	}
	for _, nb := range v.nbs {
		for _, i := range e.users.x.Row(int(nb.Index)) {
			if !hasBit(v.look, i) {
				continue
			}
			if v.users[i].n == 0 {
				v.touched = append(v.touched, i)
			}
			v.users[i].add(nb.Value)
		}
	}
}

// pair writes the raw features φ(u, i) of the view's user into raw and
// reports whether any is not missing: what extract gives for i, to the
// bit (the item side accumulates O⁺u ∩ KNN(i) in item order as the
// reversed lists do, the user side KNN(u) in its order). byIndex is
// e.pairRows(): KNN(i) in item order.
func (e *febrExtractor) pair(v *febrView, byIndex *Neighbours, i uint32, raw []float64) bool {
	found := false
	off := 0
	if e.items != nil {
		var a aggOf
		for _, nb := range byIndex.Row(int(i)) {
			if hasBit(v.hist, nb.Index) {
				a.add(nb.Value)
			}
		}
		a.write(e.k, raw[:featuresPerSide])
		found = a.n > 0
		off = featuresPerSide
	}
	if e.users != nil {
		a := &v.users[i]
		a.write(e.k, raw[off:off+featuresPerSide])
		found = found || a.n > 0
	}
	return found
}

// pairRows returns the item side's KNN(i) lists with each row in item
// order (nil for FEBRu), for pair: the entries of O⁺u ∩ KNN(i) then come
// in the order extract accumulates them, without a sort per pair.
func (e *febrExtractor) pairRows() *Neighbours {
	if e.items == nil {
		return nil
	}
	fwd := e.items.fwd
	out := &Neighbours{ptr: fwd.ptr, ent: slices.Clone(fwd.ent)}
	for r := range out.Rows() {
		slices.SortFunc(out.ent[out.ptr[r]:out.ptr[r+1]], func(a, b Neighbour) int { return cmp.Compare(a.Index, b.Index) })
	}
	return out
}

// febrExtractor computes the FEBR feature vectors φ(u, i) of one variant
// (§4.5.2–4.5.4): the item side from ActiveItems(u, i) = O⁺u ∩ KNN(i) with
// the stored item affinities, the user side from ActiveUsers(u, i) =
// O⁺i ∩ KNN(u) with KNN(u) computed from the (live) history. It is
// immutable once built and safe for concurrent use.
type febrExtractor struct {
	k      int
	nItems int
	items  *itemSide // nil for FEBRu
	users  *userSide // nil for FEBRi
	dim    int
	// mean and std z-score every feature (std 1 where a feature does not
	// vary); nil until the statistics are known.
	mean, std, invStd []float64
	pool              sync.Pool
}

type febrScratch struct {
	acc     [2]sideAcc
	mark    []bool
	touched []uint32
	raw     []float64
	user    userScratch
}

func newFEBRExtractor(k, nItems int, items *itemSide, users *userSide) *febrExtractor {
	e := &febrExtractor{k: k, nItems: nItems, items: items, users: users}
	if items != nil {
		e.dim += featuresPerSide
	}
	if users != nil {
		e.dim += featuresPerSide
	}
	e.pool.New = func() any {
		sc := &febrScratch{mark: make([]bool, nItems), raw: make([]float64, e.dim)}
		if items != nil {
			sc.acc[0] = newSideAcc(nItems)
		}
		if users != nil {
			sc.acc[1] = newSideAcc(nItems)
			sc.user = *users.newScratch()
		}
		return sc
	}
	return e
}

func (e *febrExtractor) touch(sc *febrScratch, i uint32) {
	if !sc.mark[i] {
		sc.mark[i] = true
		sc.touched = append(sc.touched, i)
	}
}

// extract calls visit with the raw feature vector of every item whose
// features are not missing on some side, in ascending item order, for a
// user with the given history (sorted; items ≥ nItems are ignored) who is
// row self of the training matrix (−1 for none: KNN(u) is over U \ u). The
// slice passed to visit is reused.
func (e *febrExtractor) extract(self int, history []uint32, visit func(i uint32, raw []float64)) {
	sc := e.pool.Get().(*febrScratch)
	defer e.pool.Put(sc)
	sc.touched = sc.touched[:0]
	if e.items != nil {
		// aggregates over O⁺u ∩ KNN(i): walk the reversed lists from the
		// user's items (Thm 4.3).
		acc := sc.acc[0]
		prev := -1
		for _, j := range history {
			if int(j) >= e.nItems || int(j) == prev {
				continue
			}
			prev = int(j)
			for _, nb := range e.items.rev.Row(int(j)) {
				if acc.add(nb.Index, nb.Value) {
					e.touch(sc, nb.Index)
				}
			}
		}
	}
	if e.users != nil {
		// aggregates over O⁺i ∩ KNN(u) (Cor. 4.1).
		acc := sc.acc[1]
		for _, nb := range e.users.neighbours(self, history, &sc.user) {
			for _, i := range e.users.x.Row(int(nb.Index)) {
				if acc.add(i, nb.Value) {
					e.touch(sc, i)
				}
			}
		}
	}
	// Ascending item order: sort the touched items, or scan the marks
	// when most items are touched.
	if len(sc.touched) > e.nItems/16 {
		sc.touched = sc.touched[:0]
		for i, m := range sc.mark {
			if m {
				sc.touched = append(sc.touched, uint32(i))
			}
		}
	} else {
		slices.Sort(sc.touched)
	}
	for _, i := range sc.touched {
		sc.mark[i] = false
		off := 0
		if e.items != nil {
			sc.acc[0].features(i, e.k, sc.raw[:featuresPerSide])
			off = featuresPerSide
		}
		if e.users != nil {
			sc.acc[1].features(i, e.k, sc.raw[off:off+featuresPerSide])
		}
		visit(i, sc.raw)
	}
}

// missingRaw is the raw feature vector of a pair with no active item or
// user on any side: aggregates 0 and every indicator 1.
func (e *febrExtractor) missingRaw() []float64 {
	raw := make([]float64, e.dim)
	for off := 0; off < e.dim; off += featuresPerSide {
		raw[off+aggMissing] = 1
	}
	return raw
}

// zscore writes (raw − mean)/std into out (raw and out may be the same
// slice): the one conversion used by training and scoring alike, so that
// both see identical values.
func (e *febrExtractor) zscore(raw []float64, out []float64) {
	for f, v := range raw {
		out[f] = (v - e.mean[f]) * e.invStd[f]
	}
}

// setStats sets the z-score statistics.
func (e *febrExtractor) setStats(mean, std []float64) {
	e.mean, e.std = mean, std
	e.invStd = make([]float64, len(std))
	for f, s := range std {
		e.invStd[f] = 1 / s
	}
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

// febrBlock holds the z-scored features of one user's candidate items:
// the items with a non-missing feature (§4.5.6), ascending, row q of feat
// belonging to items[q].
type febrBlock struct {
	items []uint32
	feat  []float64
}

// block extracts the z-scored features of every candidate item of a user.
func (e *febrExtractor) block(self int, history []uint32, b *febrBlock) {
	b.items, b.feat = b.items[:0], b.feat[:0]
	e.extract(self, history, func(i uint32, raw []float64) {
		b.items = append(b.items, i)
		n := len(b.feat)
		b.feat = slices.Grow(b.feat, e.dim)[:n+e.dim]
		e.zscore(raw, b.feat[n:])
	})
}

func (b *febrBlock) row(q, dim int) []float64 { return b.feat[q*dim : (q+1)*dim] }

// dot is θ·z.
func dot(theta []float64, z []float64) float64 {
	s := 0.0
	for f, v := range z {
		s += theta[f] * v
	}
	return s
}
