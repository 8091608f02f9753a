package retrieval

import "fmt"

// Searcher pairs a metric with the exact index of the catalogue projected by
// it: the content side of GET /items/{id}/similar and POST /search/similar
// (SPEC.md §3, §5). Like its parts it is safe for concurrent searches.
type Searcher struct {
	Metric *Metric
	Index  *Index
}

// NewSearcher projects every item (row i gets id i) and indexes it.
func NewSearcher(m *Metric, items [][]float64) (*Searcher, error) {
	proj, err := m.ProjectAll(items)
	if err != nil {
		return nil, err
	}
	if len(proj) == 0 {
		return &Searcher{Metric: m, Index: NewIndex(m.Rank())}, nil
	}
	ix, err := BuildIndex(proj)
	if err != nil {
		return nil, err
	}
	return &Searcher{Metric: m, Index: ix}, nil
}

// SimilarToItem returns the k items nearest to item id under the metric,
// leaving out id itself and any id exclude rejects (exclude may be nil).
func (s *Searcher) SimilarToItem(id, k int, exclude func(id int) bool) ([]Neighbour, error) {
	if id < 0 || id >= s.Index.Len() {
		return nil, fmt.Errorf("retrieval: item %d not indexed", id)
	}
	return s.Index.SearchID(id, k, exclude), nil
}

// SimilarToVector ranks the catalogue for an unseen feature vector x (query
// by example), standardised and projected the same way as the items.
func (s *Searcher) SimilarToVector(x []float64, k int, exclude func(id int) bool) ([]Neighbour, error) {
	q, err := s.Metric.Project(x)
	if err != nil {
		return nil, err
	}
	return s.Index.Search(q, k, exclude), nil
}
