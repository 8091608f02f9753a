package ltr

import "fmt"

// Model is a trained LambdaMART ranker: a sum of regression trees over
// the features of one candidate. A Model is immutable and safe for
// concurrent use.
type Model struct {
	d     int
	roots []int32 // the first node of each tree; tree t is nodes[roots[t]:roots[t+1]]
	nodes []node
}

// Features is the number of features of a row.
func (m *Model) Features() int { return m.d }

// Trees is the number of trees.
func (m *Model) Trees() int { return len(m.roots) }

// Score is the model's score of one candidate, the sum of its trees'
// leaf outputs: x holds Features() values (it panics on fewer). A NaN
// feature value goes right at every split on that feature. The ranking of
// a query is Order of its candidates' scores.
func (m *Model) Score(x []float32) float64 {
	x = x[:m.d]
	s := 0.0
	for _, r := range m.roots {
		s += m.leaf(r, x).value
	}
	return s
}

// leaf is the leaf of x in the tree rooted at node r.
func (m *Model) leaf(r int32, x []float32) *node {
	n := &m.nodes[r]
	for n.feature >= 0 {
		if x[n.feature] <= n.threshold {
			n = &m.nodes[n.left]
		} else {
			n = &m.nodes[n.right]
		}
	}
	return n
}

// ScoreBatch writes the scores of the rows of x (row-major, Features()
// columns) into out, one per row; it panics unless len(x) is
// len(out)·Features(). Each score is the one Score gives.
func (m *Model) ScoreBatch(x []float32, out []float64) {
	if len(x) != len(out)*m.d {
		panic(fmt.Sprintf("ltr: ScoreBatch of %d values into %d scores of %d features", len(x), len(out), m.d))
	}
	for i := range out {
		out[i] = m.Score(x[i*m.d : (i+1)*m.d])
	}
}

// Importance is the share of each feature in a model's splits.
type Importance struct {
	// Gain is each feature's total split gain divided by the total over
	// all features, summing to 1 (all 0 when the model has no split).
	Gain []float64
	// Splits is the number of splits on each feature.
	Splits []int
}

// Importance returns the features' split gains and counts.
func (m *Model) Importance() Importance {
	imp := Importance{Gain: make([]float64, m.d), Splits: make([]int, m.d)}
	total := 0.0
	for _, n := range m.nodes {
		if n.feature >= 0 {
			imp.Gain[n.feature] += n.gain
			imp.Splits[n.feature]++
			total += n.gain
		}
	}
	if total > 0 {
		for f := range imp.Gain {
			imp.Gain[f] /= total
		}
	}
	return imp
}

// Explain splits the score of row x into a bias and one contribution per
// feature, by the path attribution of Saabas (2014): along x's path in
// each tree, the change from a node's value to its child's (the mean
// output of the training rows that reach each, see node.value) is
// credited to the feature the node splits on, and each root's value goes
// to the bias. The bias plus the contributions is the score, up to the
// rounding of the sums.
func (m *Model) Explain(x []float32) (bias float64, contrib []float64) {
	x = x[:m.d]
	contrib = make([]float64, m.d)
	for _, r := range m.roots {
		n := &m.nodes[r]
		bias += n.value
		for n.feature >= 0 {
			c := &m.nodes[n.right]
			if x[n.feature] <= n.threshold {
				c = &m.nodes[n.left]
			}
			contrib[n.feature] += c.value - n.value
			n = c
		}
	}
	return bias, contrib
}
