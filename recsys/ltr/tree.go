package ltr

import (
	"runtime"
	"sync"
)

// node is one node of a regression tree. Children come after their parent
// in a tree's nodes, so a walk from the root always ends at a leaf.
type node struct {
	feature   int32   // the split feature, −1 at a leaf
	threshold float32 // x[feature] ≤ threshold goes left
	left      int32   // the children's indices (into the model's nodes)
	right     int32
	gain      float64 // the split's gain; 0 at a leaf
	// value is a leaf's output (its Newton step times the learning rate)
	// or, at an internal node, the mean output of the training rows that
	// reach it: the mean of its leaves' outputs weighted by their rows.
	value float64
}

// histBin sums the λ-gradients (g), the weights (h) and the count (n) of
// the rows of a leaf whose feature falls in one bin.
type histBin struct {
	g, h float64
	n    int32
}

// split is the best split found for a leaf: rows whose bin of feature is
// at most bin go left, and gl, hl, nl are the left child's sums.
type split struct {
	feature, bin int
	gain         float64
	gl, hl       float64
	nl           int
}

// leaf is an open leaf of the tree being grown.
type leaf struct {
	node   int // its index in the tree's nodes
	lo, hi int // its rows are grower.rows[lo:hi]
	depth  int
	g, h   float64   // Σλ and Σw of its rows, from the histogram
	hist   []histBin // nil once it cannot split
	best   split     // gain 0 when it cannot split
}

// grower fits one regression tree to the λ-gradients of the training rows.
type grower struct {
	opt    Options
	d      int
	bins   []uint8 // training rows' bins, row-major with d columns
	cuts   [][]float32
	nbins  []int // bins of each feature
	offs   []int // first histogram slot of each feature
	size   int   // slots of a histogram
	rows   []int32
	tmp    []int32
	free   [][]histBin
	chunks [][]histBin
}

// hessShare is the smallest share of its parent's Σw that a child may
// hold: a child with practically no weight would take an arbitrary Newton
// step Σλ/Σw.
const hessShare = 1e-9

// Histograms of more rows than 2·histChunk are summed in up to histChunks
// pieces in parallel. Their number depends on the rows alone, so a model
// does not depend on the machine's cores.
const (
	histChunk  = 1 << 14
	histChunks = 8
)

func newGrower(opt Options, bins []uint8, b binner, rows int) *grower {
	g := &grower{opt: opt, d: len(b.cuts), bins: bins, cuts: b.cuts,
		rows: make([]int32, rows), tmp: make([]int32, rows)}
	for _, c := range b.cuts {
		g.offs = append(g.offs, g.size)
		g.nbins = append(g.nbins, len(c)+1)
		g.size += len(c) + 1
	}
	return g
}

func (gr *grower) getHist() []histBin {
	if n := len(gr.free); n > 0 {
		h := gr.free[n-1]
		gr.free = gr.free[:n-1]
		return h
	}
	return make([]histBin, gr.size)
}

func (gr *grower) putHist(h []histBin) {
	if h != nil {
		gr.free = append(gr.free, h)
	}
}

// accumulate adds rows' gradients to hist.
func (gr *grower) accumulate(hist []histBin, rows []int32, lam, w []float64) {
	d := gr.d
	offs := gr.offs[:d]
	for _, r := range rows {
		gv, hv := lam[r], w[r]
		b := gr.bins[int(r)*d : int(r)*d+d]
		for f, v := range b {
			e := &hist[offs[f]+int(v)]
			e.g += gv
			e.h += hv
			e.n++
		}
	}
}

// build sets hist to the histogram of rows.
func (gr *grower) build(hist []histBin, rows []int32, lam, w []float64) {
	clear(hist)
	nc := min(histChunks, len(rows)/histChunk)
	if nc < 2 {
		gr.accumulate(hist, rows, lam, w)
		return
	}
	for len(gr.chunks) < nc {
		gr.chunks = append(gr.chunks, make([]histBin, gr.size))
	}
	workers := min(runtime.GOMAXPROCS(0), nc)
	var wg sync.WaitGroup
	for wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := wk; c < nc; c += workers {
				h := gr.chunks[c]
				clear(h)
				gr.accumulate(h, rows[c*len(rows)/nc:(c+1)*len(rows)/nc], lam, w)
			}
		}()
	}
	wg.Wait()
	for _, h := range gr.chunks[:nc] {
		for i := range hist {
			hist[i].g += h[i].g
			hist[i].h += h[i].h
			hist[i].n += h[i].n
		}
	}
}

// findSplit sets l.best to the split of l that most lowers the quadratic
// (Newton) model of the cost C around the current scores,
//
//	gain = ½ (G_L²/(H_L+L2) + G_R²/(H_R+L2) − G²/(H+L2)),
//
// G and H the sums of λ and w of a child (Chen and Guestrin 2016 §2.2),
// among the splits that leave both children MinLeaf rows and a share of
// the weight; the first of equal gains (lowest feature, then bin) wins.
// Burges 2010 §7, Alg. 1 fits the tree to λ by least squares and takes
// Newton steps only for the leaf values; this gain makes the split
// consistent with those values.
func (gr *grower) findSplit(l *leaf) {
	l.best = split{}
	n := l.hi - l.lo
	o := gr.opt
	if l.hist == nil || n < 2*o.MinLeaf || (o.MaxDepth > 0 && l.depth >= o.MaxDepth) {
		return
	}
	parent := l.g * l.g / (l.h + o.L2)
	minH := hessShare * l.h
	for f := range gr.d {
		h := l.hist[gr.offs[f] : gr.offs[f]+gr.nbins[f]]
		var gl, hl float64
		nl := 0
		for b := 0; b < len(h)-1; b++ {
			gl += h[b].g
			hl += h[b].h
			nl += int(h[b].n)
			if nl < o.MinLeaf {
				continue
			}
			if n-nl < o.MinLeaf {
				break
			}
			hr := l.h - hl
			if hl <= minH || hr <= minH {
				continue
			}
			gRight := l.g - gl
			gain := 0.5 * (gl*gl/(hl+o.L2) + gRight*gRight/(hr+o.L2) - parent)
			if gain > l.best.gain {
				l.best = split{feature: f, bin: b, gain: gain, gl: gl, hl: hl, nl: nl}
			}
		}
	}
}

// splittable reports whether a leaf of n rows at depth may be split.
func (gr *grower) splittable(n, depth int) bool {
	return n >= 2*gr.opt.MinLeaf && (gr.opt.MaxDepth == 0 || depth < gr.opt.MaxDepth)
}

// segment is a leaf of a grown tree and its rows, grower.rows[lo:hi].
type segment struct {
	node, lo, hi int
}

// grow fits a tree of at most MaxLeaves leaves to lam and w, best leaf
// first (the open leaf whose split gains most is split next). It returns
// the tree's nodes, child indices counted from the tree's first node, with
// the leaf values set to η Σλ/(Σw+L2) over each leaf's rows (Burges 2010
// §6–§7: the Newton step γ = Σ y_i / Σ w_i with y = λ) and the internal
// values to the row-weighted means, and the leaves' rows.
func (gr *grower) grow(lam, w []float64) ([]node, []segment) {
	for i := range gr.rows {
		gr.rows[i] = int32(i)
	}
	root := leaf{node: 0, lo: 0, hi: len(gr.rows)}
	for _, r := range gr.rows {
		root.g += lam[r]
		root.h += w[r]
	}
	nodes := []node{{feature: -1}}
	if gr.splittable(root.hi, 0) {
		root.hist = gr.getHist()
		gr.build(root.hist, gr.rows, lam, w)
		gr.findSplit(&root)
	}
	open := []leaf{root}
	for len(open) < gr.opt.MaxLeaves {
		k := -1
		for i := range open {
			if open[i].best.gain > 0 && (k < 0 || open[i].best.gain > open[k].best.gain) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		left, right := gr.split(&open[k], &nodes, lam, w)
		open[k] = left
		open = append(open, right)
	}
	segs := make([]segment, 0, len(open))
	for _, l := range open {
		gr.putHist(l.hist)
		segs = append(segs, segment{node: l.node, lo: l.lo, hi: l.hi})
	}
	gr.setValues(nodes, segs, lam, w)
	return nodes, segs
}

// split splits leaf l by its best split into two new nodes and returns
// the children as open leaves with their histograms and best splits.
func (gr *grower) split(l *leaf, nodes *[]node, lam, w []float64) (leaf, leaf) {
	s := l.best
	f := s.feature
	nl := len(*nodes)
	(*nodes)[l.node] = node{feature: int32(f), threshold: gr.cuts[f][s.bin],
		left: int32(nl), right: int32(nl + 1), gain: s.gain}
	*nodes = append(*nodes, node{feature: -1}, node{feature: -1})

	// Stable partition of the rows: left rows first, in their order.
	seg := gr.rows[l.lo:l.hi]
	nLeft, nRight := 0, 0
	for _, r := range seg {
		if int(gr.bins[int(r)*gr.d+f]) <= s.bin {
			seg[nLeft] = r
			nLeft++
		} else {
			gr.tmp[nRight] = r
			nRight++
		}
	}
	copy(seg[nLeft:], gr.tmp[:nRight])

	left := leaf{node: nl, lo: l.lo, hi: l.lo + nLeft, depth: l.depth + 1, g: s.gl, h: s.hl}
	right := leaf{node: nl + 1, lo: l.lo + nLeft, hi: l.hi, depth: l.depth + 1, g: l.g - s.gl, h: l.h - s.hl}
	okL, okR := gr.splittable(nLeft, left.depth), gr.splittable(nRight, right.depth)
	if okL || okR {
		// Histogram subtraction: build the smaller child, and the larger
		// is its parent's histogram minus the smaller's.
		small, large := &left, &right
		if nRight < nLeft {
			small, large = &right, &left
		}
		small.hist = gr.getHist()
		gr.build(small.hist, gr.rows[small.lo:small.hi], lam, w)
		large.hist = l.hist
		for i := range large.hist {
			large.hist[i].g -= small.hist[i].g
			large.hist[i].h -= small.hist[i].h
			large.hist[i].n -= small.hist[i].n
		}
	} else {
		gr.putHist(l.hist)
	}
	l.hist = nil
	for _, c := range []*leaf{&left, &right} {
		gr.findSplit(c)
		if c.best.gain == 0 {
			gr.putHist(c.hist)
			c.hist = nil
		}
	}
	return left, right
}

// setValues sets each leaf's output to η Σλ/(Σw+L2) summed over its rows
// (0 when the denominator is 0) and each internal node's to the mean of
// its children's weighted by their training rows.
func (gr *grower) setValues(nodes []node, segs []segment, lam, w []float64) {
	count := make([]int, len(nodes))
	for _, s := range segs {
		var g, h float64
		for _, r := range gr.rows[s.lo:s.hi] {
			g += lam[r]
			h += w[r]
		}
		v := 0.0
		if h+gr.opt.L2 > 0 {
			v = gr.opt.LearningRate * g / (h + gr.opt.L2)
		}
		nodes[s.node].value = v
		count[s.node] = s.hi - s.lo
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := &nodes[i]
		if n.feature < 0 {
			continue
		}
		cl, cr := count[n.left], count[n.right]
		count[i] = cl + cr
		if count[i] > 0 {
			n.value = (float64(cl)*nodes[n.left].value + float64(cr)*nodes[n.right].value) / float64(count[i])
		}
	}
}
