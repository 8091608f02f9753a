package mf

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"github.com/recsys-engine/recsys/recsys"
)

// The training state of MFAUC: the blocks of an iteration (seed 003
// §2.2.1), the sampled row and column steps, and the item weights.

// itemWeights returns p̂(y) = c(y)/m and the g and g′ weights p̂^τ and
// (1 − p̂)^τ, or nils when τ = 0 (uniform).
func itemWeights(x *recsys.Matrix, tau float64) (phat, wPos, wNeg []float64) {
	if tau == 0 {
		return nil, nil, nil
	}
	n := x.Items()
	phat, wPos, wNeg = make([]float64, n), make([]float64, n), make([]float64, n)
	m := math.Max(1, float64(x.Users()))
	for i := range n {
		phat[i] = float64(x.ItemCount(i)) / m
	}
	weightsFrom(phat, tau, wPos, wNeg)
	return phat, wPos, wNeg
}

func weightsFrom(phat []float64, tau float64, wPos, wNeg []float64) {
	for i, p := range phat {
		wPos[i] = math.Pow(p, tau)
		wNeg[i] = math.Pow(1-p, tau)
	}
}

// aucTrainer holds a fit's state and the block structure of the current
// iteration.
type aucTrainer struct {
	c          *aucConfig
	f          *factors
	x          *recsys.Matrix
	d          int
	wPos, wNeg []float64

	rowPerm, colPerm   []uint32
	rowStart, colStart []int
	rowBlk, colBlk     []int32
	rowBase, colBase   []int
	rp, cp             []uint32  // rows grouped by column block; columns by row block
	rptr, cptr         []int     // segment offsets, (d+1) per row / column
	rcum               []float64 // running g weights, restarting at every row segment (τ ≠ 0)
	negPosW            []float64 // Σ g′ weights of a row's positives per block (τ ≠ 0)
	ccum               []float64 // running g′ weights along colPerm, restarting per block (τ ≠ 0)
	blockNegW          []float64
	gScale, gScaleNeg  []float64 // per user and block, see itemTotals
	negAll             []float64
	itemW              []float64 // W_jw per item and row block
	iter               int
}

func newAUCTrainer(x *recsys.Matrix, c *aucConfig, f *factors, rng *rand.Rand) *aucTrainer {
	f.init(x, c.factors, false)
	// Zero-mean Gaussian factors with standard deviation 0.1 (§5.1).
	gaussian(rng, f.user, 0.1)
	gaussian(rng, f.item, 0.1)
	m, n, nnz := x.Users(), x.Items(), x.NNZ()
	d := max(1, min(c.blocks, m, n))
	t := &aucTrainer{c: c, f: f, x: x, d: d,
		rowPerm: make([]uint32, m), colPerm: make([]uint32, n),
		rowStart: make([]int, d+1), colStart: make([]int, d+1),
		rowBlk: make([]int32, m), colBlk: make([]int32, n),
		rowBase: make([]int, m+1), colBase: make([]int, n+1),
		rp: make([]uint32, nnz), cp: make([]uint32, nnz),
		rptr: make([]int, m*(d+1)), cptr: make([]int, n*(d+1)),
		gScale: make([]float64, m*d), gScaleNeg: make([]float64, m*d),
		negAll: make([]float64, d*d), itemW: make([]float64, n*d),
	}
	_, t.wPos, t.wNeg = itemWeights(x, c.tau)
	if t.wPos != nil {
		t.rcum, t.negPosW = make([]float64, nnz), make([]float64, m*d)
		t.ccum, t.blockNegW = make([]float64, n), make([]float64, d)
	}
	for u := range m {
		t.rowPerm[u] = uint32(u)
		t.rowBase[u+1] = t.rowBase[u] + x.UserCount(u)
	}
	for i := range n {
		t.colPerm[i] = uint32(i)
		t.colBase[i+1] = t.colBase[i] + x.ItemCount(i)
	}
	for w := range d + 1 {
		t.rowStart[w], t.colStart[w] = w*m/d, w*n/d
	}
	return t
}

// deal draws this iteration's random row and column blocks and groups
// every row's items by column block and every column's users by row block.
func (t *aucTrainer) deal(rng *rand.Rand) {
	d := t.d
	rng.Shuffle(len(t.rowPerm), func(a, b int) { t.rowPerm[a], t.rowPerm[b] = t.rowPerm[b], t.rowPerm[a] })
	rng.Shuffle(len(t.colPerm), func(a, b int) { t.colPerm[a], t.colPerm[b] = t.colPerm[b], t.colPerm[a] })
	for w := range d {
		for _, u := range t.rowPerm[t.rowStart[w]:t.rowStart[w+1]] {
			t.rowBlk[u] = int32(w)
		}
		for _, i := range t.colPerm[t.colStart[w]:t.colStart[w+1]] {
			t.colBlk[i] = int32(w)
		}
	}
	group := func(n int, base []int, line func(int) []uint32, blk []int32, out []uint32, ptr []int) {
		for r := range n {
			p := ptr[r*(d+1) : (r+1)*(d+1)]
			clear(p)
			row := line(r)
			for _, c := range row {
				p[blk[c]+1]++
			}
			p[0] = base[r]
			for b := range d {
				p[b+1] += p[b]
			}
			// Stable placement by block, keeping ascending order within.
			for b := range d {
				at := p[b]
				for _, c := range row {
					if int(blk[c]) == b {
						out[at] = c
						at++
					}
				}
			}
		}
	}
	group(t.x.Users(), t.rowBase, t.x.Row, t.colBlk, t.rp, t.rptr)
	group(t.x.Items(), t.colBase, t.x.Col, t.rowBlk, t.cp, t.cptr)
	if t.wPos != nil {
		t.dealWeights()
	}
	t.itemTotals()
}

// dealWeights sets the running g weights of the row segments and the g′
// weights of the column blocks (τ ≠ 0).
func (t *aucTrainer) dealWeights() {
	d := t.d
	for u := range t.x.Users() {
		p := t.rptr[u*(d+1) : (u+1)*(d+1)]
		for b := range d {
			cum, neg := 0.0, 0.0
			for k := p[b]; k < p[b+1]; k++ {
				cum += t.wPos[t.rp[k]]
				neg += t.wNeg[t.rp[k]]
				t.rcum[k] = cum
			}
			t.negPosW[u*d+b] = neg
		}
	}
	for b := range d {
		cum := 0.0
		for k := t.colStart[b]; k < t.colStart[b+1]; k++ {
			cum += t.wNeg[t.colPerm[k]]
			t.ccum[k] = cum
		}
		t.blockNegW[b] = cum
	}
}

// itemTotals sets W_jw, the total weight of item j in the objective of
// block (R_w, C_b) for its column block b: Σ over users i ∈ R_w of g_i(j)
// when j is relevant to i and g′_i(j) otherwise, with g and g′ restricted
// to the block. An item step divides the block gradient by it (a diagonal
// preconditioner, see itemStep).
func (t *aucTrainer) itemTotals() {
	d := t.d
	m, n := t.x.Users(), t.x.Items()
	// pos[i·d+b] and neg[i·d+b] are g_i(j)/wPos(j) and g′_i(j)/wNeg(j)
	// in block b (item-independent when τ = 0, and scaled by the item's
	// weight otherwise).
	pos, neg := t.gScale[:m*d], t.gScaleNeg[:m*d]
	for i := range m {
		for b := range d {
			np := t.rptr[i*(d+1)+b+1] - t.rptr[i*(d+1)+b]
			nb := t.colStart[b+1] - t.colStart[b]
			pos[i*d+b], neg[i*d+b] = 0, 0
			if t.wPos == nil {
				if np > 0 {
					pos[i*d+b] = 1 / float64(np)
				}
				if nb > np {
					neg[i*d+b] = 1 / float64(nb-np)
				}
				continue
			}
			if np > 0 {
				pos[i*d+b] = 1 / t.rcum[t.rptr[i*(d+1)+b+1]-1]
			}
			if den := t.blockNegW[b] - t.negPosW[i*d+b]; nb > np && den > 0 {
				neg[i*d+b] = 1 / den
			}
		}
	}
	// negAll[w·d+b] = Σ_{i ∈ R_w} neg[i·d+b].
	negAll := t.negAll
	clear(negAll)
	for w := range d {
		for _, i := range t.rowPerm[t.rowStart[w]:t.rowStart[w+1]] {
			for b := range d {
				negAll[w*d+b] += neg[int(i)*d+b]
			}
		}
	}
	for j := range n {
		b := int(t.colBlk[j])
		wp, wn := 1.0, 1.0
		if t.wPos != nil {
			wp, wn = t.wPos[j], t.wNeg[j]
		}
		for w := range d {
			sp, sn := 0.0, 0.0
			for _, i := range t.cp[t.cptr[j*(d+1)+w]:t.cptr[j*(d+1)+w+1]] {
				sp += pos[int(i)*d+b]
				sn += neg[int(i)*d+b]
			}
			t.itemW[j*d+w] = wp*sp + wn*(negAll[w*d+b]-sn)
		}
	}
}

// aucScratch is one goroutine's buffers.
type aucScratch struct {
	rng                     *rand.Rand
	pos, neg                []uint32
	sp, a, sq, b, c, dq, lp []float64
	grad, acc               []float64
}

func newAUCScratch(k, kappaY int) *aucScratch {
	n := kappaY + 1
	return &aucScratch{pos: make([]uint32, 0, n), neg: make([]uint32, 0, n),
		sp: make([]float64, n), a: make([]float64, n), sq: make([]float64, n), b: make([]float64, n),
		c: make([]float64, n), dq: make([]float64, n), lp: make([]float64, n*n),
		grad: make([]float64, k), acc: make([]float64, k)}
}

// positives draws κ_Y relevant items of user u in column block b from g.
func (t *aucTrainer) positives(s *aucScratch, u, b int) []uint32 {
	lo, hi := t.rptr[u*(t.d+1)+b], t.rptr[u*(t.d+1)+b+1]
	s.pos = s.pos[:0]
	if lo == hi {
		return s.pos
	}
	for range t.c.kappaY {
		k := lo + s.rng.IntN(hi-lo)
		if t.rcum != nil {
			k = lo + sampleCum(s.rng, t.rcum[lo:hi], t.rcum[hi-1])
		}
		s.pos = append(s.pos, t.rp[k])
	}
	return s.pos
}

// sampleCum returns the index of a draw from the weights whose running
// sums are cum (total = cum[len−1]).
func sampleCum(rng *rand.Rand, cum []float64, total float64) int {
	r := rng.Float64() * total
	k := sort.SearchFloat64s(cum, r)
	for k < len(cum)-1 && cum[k] <= r {
		k++
	}
	return min(k, len(cum)-1)
}

// negatives appends to s.neg up to κ_Y irrelevant items of user u in
// column block b drawn from g′ (rejection of u's relevant items).
func (t *aucTrainer) negatives(s *aucScratch, u, b int) []uint32 {
	lo, hi := t.colStart[b], t.colStart[b+1]
	s.neg = s.neg[:0]
	row := t.x.Row(u)
	if npos := t.rptr[u*(t.d+1)+b+1] - t.rptr[u*(t.d+1)+b]; npos >= hi-lo {
		return s.neg
	}
	for range t.c.kappaY {
		for range 32 {
			k := lo + s.rng.IntN(hi-lo)
			if t.ccum != nil {
				k = lo + sampleCum(s.rng, t.ccum[lo:hi], t.blockNegW[b])
			}
			if j := t.colPerm[k]; !contains(row, j) {
				s.neg = append(s.neg, j)
				break
			}
		}
	}
	return s.neg
}

// gPos is g restricted to user u's relevant items of block b, at item j.
func (t *aucTrainer) gPos(u, b int, j uint32) float64 {
	lo, hi := t.rptr[u*(t.d+1)+b], t.rptr[u*(t.d+1)+b+1]
	if t.rcum == nil {
		return 1 / float64(hi-lo)
	}
	return t.wPos[j] / t.rcum[hi-1]
}

// gNeg is g′ restricted to user u's irrelevant items of block b, at item j.
func (t *aucTrainer) gNeg(u, b int, j uint32) float64 {
	npos := t.rptr[u*(t.d+1)+b+1] - t.rptr[u*(t.d+1)+b]
	if t.ccum == nil {
		return 1 / float64(t.colStart[b+1]-t.colStart[b]-npos)
	}
	return t.wNeg[j] / math.Max(t.blockNegW[b]-t.negPosW[u*t.d+b], 1e-300)
}

// scores sets out[k] = u·v_items[k].
func (t *aucTrainer) scores(u []float64, items []uint32, out []float64) []float64 {
	return itemScores(t.f, u, items, out)
}

// itemScores sets out[k] = u·v_items[k] for the item factors of f.
func itemScores(f *factors, u []float64, items []uint32, out []float64) []float64 {
	out = out[:len(items)]
	for k, i := range items {
		out[k] = dot(u, f.itemVec(int(i)))
	}
	return out
}

// userStep takes one step on uᵤ in block b and returns the sampled user
// term θ̂ᵤ, or false when the block holds no relevant-irrelevant pair.
func (t *aucTrainer) userStep(s *aucScratch, u, b int) (float64, bool) {
	theta, ok := t.userGrad(s, u, b)
	if ok {
		axpy(-t.c.lr, s.grad, t.f.userVec(u))
	}
	return theta, ok
}

// userGrad sets s.grad to the sampled m·∂θ/∂uᵤ of block b (unbiased when
// φ is the identity) and returns the sampled term θ̂ᵤ.
func (t *aucTrainer) userGrad(s *aucScratch, u, b int) (float64, bool) {
	pos := t.positives(s, u, b)
	if len(pos) == 0 {
		return 0, false
	}
	neg := t.negatives(s, u, b)
	if len(neg) == 0 {
		return 0, false
	}
	return s.userGrad(t.c, t.f, t.f.userVec(u), pos, neg, true), true
}

// userGrad sets s.grad to the gradient of the user term at u over the
// pairs of pos and neg, uniformly weighted: λu + Σ_j c_j v_j + Σ_q d_q v_q
// with c and d from pairTerm. It returns the term when value is set. The
// trainer's user step and the fold-in share it.
func (s *aucScratch) userGrad(c *aucConfig, f *factors, u []float64, pos, neg []uint32, value bool) float64 {
	sp, sq := itemScores(f, u, pos, s.sp), itemScores(f, u, neg, s.sq)
	a, bq := s.a[:len(pos)], s.b[:len(neg)]
	for k := range a {
		a[k] = 1 / float64(len(pos))
	}
	for k := range bq {
		bq[k] = 1 / float64(len(neg))
	}
	cp, dq := s.c[:len(pos)], s.dq[:len(neg)]
	theta := c.obj.pairTerm(sp, a, sq, bq, cp, dq, s.lp, value)
	g := s.grad
	for k := range g {
		g[k] = c.lambda * u[k]
	}
	for k, p := range pos {
		axpy(cp[k], f.itemVec(int(p)), g)
	}
	for k, q := range neg {
		axpy(dq[k], f.itemVec(int(q)), g)
	}
	return theta
}

// itemStep takes one step on vⱼ in block (R_w, C_b).
func (t *aucTrainer) itemStep(s *aucScratch, j uint32, w, b int) {
	// The step follows ∂θ_b/∂vⱼ scaled by m_b/W_jw: the weighted mean of
	// the users' terms, of order one for rare and popular items alike (the
	// plain n_b·∂θ_b/∂vⱼ of the user side grows with the item's
	// popularity and diverges for the most popular items at the step sizes
	// the others need). A positive diagonal scaling keeps the stationary
	// points of Eq. 3.
	W := t.itemW[int(j)*t.d+w]
	if W <= 0 {
		return
	}
	t.itemGrad(s, j, w, b)
	vj := t.f.itemVec(int(j))
	mb := float64(t.rowStart[w+1] - t.rowStart[w])
	nb := float64(t.colStart[b+1] - t.colStart[b])
	g := s.grad
	for f := range g {
		g[f] = (mb*s.acc[f] + t.c.lambda*mb/nb*vj[f]) / W
	}
	axpy(-t.c.lr, g, vj)
}

// itemGrad sets s.acc to an unbiased estimate (when φ is the identity) of
// 1/m_b Σ_{i ∈ R_w} ∂θ̂ᵢ/∂vⱼ, θ̂ᵢ the term of user i restricted to C_b,
// from κ_W sampled users.
func (t *aucTrainer) itemGrad(s *aucScratch, j uint32, w, b int) {
	users := t.rowPerm[t.rowStart[w]:t.rowStart[w+1]]
	seg := t.cp[t.cptr[int(j)*(t.d+1)+w]:t.cptr[int(j)*(t.d+1)+w+1]]
	mb := float64(len(users))
	cpos, cneg := len(seg), len(users)-len(seg)
	kpos, kneg := 0, 0
	switch {
	case cpos == 0:
		kneg = t.c.kappaW
	case cneg == 0:
		kpos = t.c.kappaW
	default:
		kpos = (t.c.kappaW + 1) / 2
		kneg = max(1, t.c.kappaW-kpos)
	}
	acc := s.acc
	clear(acc)
	vj := t.f.itemVec(int(j))
	// Users who find j relevant: ∂/∂vⱼ of g(j)φ(S_ij).
	for range kpos {
		i := int(seg[s.rng.IntN(cpos)])
		neg := t.negatives(s, i, b)
		if len(neg) == 0 {
			continue
		}
		ui := t.f.userVec(i)
		sp := s.sp[:1]
		sp[0] = dot(ui, vj)
		a := s.a[:1]
		a[0] = t.gPos(i, b, j)
		sq, bq := t.scores(ui, neg, s.sq), s.b[:len(neg)]
		for k := range bq {
			bq[k] = 1 / float64(len(neg))
		}
		t.c.obj.pairTerm(sp, a, sq, bq, s.c[:1], s.dq[:len(neg)], s.lp, false)
		axpy(float64(cpos)/mb/float64(kpos)*s.c[0], ui, acc)
	}
	// Users for whom j is irrelevant: ∂/∂vⱼ of Σ_p g(p)φ(S_ip) through the
	// term g′(j)L(γ_ipj) of every S_ip.
	row := func(i int) []uint32 { return t.x.Row(i) }
	for range kneg {
		i := -1
		for range 32 {
			if c := int(users[s.rng.IntN(len(users))]); !contains(row(c), j) {
				i = c
				break
			}
		}
		if i < 0 {
			continue
		}
		pos := t.positives(s, i, b)
		if len(pos) == 0 {
			continue
		}
		// φ′(S_ip) needs the other irrelevant items only when φ is not
		// the identity.
		neg := s.neg[:0]
		if t.c.obj.rho != 0 {
			neg = t.negatives(s, i, b)
		}
		gj := t.gNeg(i, b, j)
		ui := t.f.userVec(i)
		sp, a := t.scores(ui, pos, s.sp), s.a[:len(pos)]
		for k := range a {
			a[k] = 1 / float64(len(pos))
		}
		nq := len(neg)
		sq := t.scores(ui, neg, s.sq)[:nq+1]
		sq[nq] = dot(ui, vj)
		bq := s.b[:nq+1]
		for k := range nq {
			bq[k] = (1 - gj) / float64(nq)
		}
		bq[nq] = gj
		dq := s.dq[:nq+1]
		t.c.obj.pairTerm(sp, a, sq, bq, s.c[:len(pos)], dq, s.lp, false)
		axpy(float64(cneg)/mb/float64(kneg)*dq[nq], ui, acc)
	}
}

// block runs the row-and-column steps of round r on block (R_w, C_b):
// ⌈max(|R_w|, |C_b|)/d⌉ of them, taking the r-th stretch of both lists
// (the shorter wraps around), so that over the d rounds of an iteration
// every row and column is updated at least once, as in Algorithm 1. It
// returns the sum and count of the sampled user terms.
func (t *aucTrainer) block(ctx context.Context, s *aucScratch, r, w, b int) (float64, int) {
	users := t.rowPerm[t.rowStart[w]:t.rowStart[w+1]]
	items := t.colPerm[t.colStart[b]:t.colStart[b+1]]
	if len(users) == 0 || len(items) == 0 {
		return 0, 0
	}
	steps := (max(len(users), len(items)) + t.d - 1) / t.d
	sum, cnt := 0.0, 0
	for k := r * steps; k < (r+1)*steps; k++ {
		if k&255 == 0 && ctx.Err() != nil {
			return sum, cnt
		}
		if th, ok := t.userStep(s, int(users[k%len(users)]), b); ok {
			sum += th
			cnt++
		}
		t.itemStep(s, items[k%len(items)], w, b)
	}
	return sum, cnt
}

// epoch is one iteration: a fresh deal and d rounds of d concurrent blocks.
// It returns the objective estimate.
func (t *aucTrainer) epoch(ctx context.Context, rng *rand.Rand, scratch []*aucScratch) (float64, error) {
	t.deal(rng)
	d := t.d
	sums, cnts := make([]float64, d), make([]int, d)
	workers := min(d, runtime.GOMAXPROCS(0), len(scratch))
	for r := range d {
		var wg sync.WaitGroup
		next := make(chan int, d)
		for w := range d {
			next <- w
		}
		close(next)
		for g := range workers {
			wg.Add(1)
			go func(s *aucScratch) {
				defer wg.Done()
				for w := range next {
					// Each block has its own stream, whatever goroutine runs it.
					s.rng = rand.New(rand.NewPCG(t.c.seed, uint64(t.iter)<<24|uint64(r)<<12|uint64(w)))
					sum, cnt := t.block(ctx, s, r, w, (w+r)%d)
					sums[w] += sum
					cnts[w] += cnt
				}
			}(scratch[g])
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
	t.iter++
	sum, cnt := 0.0, 0
	for w := range d {
		sum, cnt = sum+sums[w], cnt+cnts[w]
	}
	obj := sum / math.Max(1, float64(cnt))
	obj += t.c.lambda / 2 * (dot(t.f.user, t.f.user)/math.Max(1, float64(t.f.nUsers)) +
		dot(t.f.item, t.f.item)/math.Max(1, float64(t.f.nItems)))
	return obj, nil
}
