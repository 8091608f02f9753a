package rank

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Problem is the training data of a metric learner: items as the rows of
// X (n×d), relevance from Sup, and the training queries (default:
// Sup.Queries()).
type Problem struct {
	X       *mat.Dense
	Sup     *Supervision
	Queries []int
}

// Check checks that X and Sup describe the same items and fills in the
// default queries; it fails when no query has both relevant and
// irrelevant items.
func (p *Problem) Check() error {
	if p.X == nil || p.Sup == nil {
		return errors.New("nil data or supervision")
	}
	n, _ := p.X.Dims()
	if n != p.Sup.Len() {
		return fmt.Errorf("%d items but supervision over %d", n, p.Sup.Len())
	}
	if p.Queries == nil {
		p.Queries = p.Sup.Queries()
	}
	if len(p.Queries) == 0 {
		return errors.New("no query has both relevant and irrelevant items")
	}
	return nil
}
