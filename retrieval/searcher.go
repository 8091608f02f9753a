package retrieval

import "fmt"

// DefaultApproxAbove is the catalogue size above which NewSearcherWith
// builds an HNSW index: an exact top-10 over 100,000 items took 3.5 ms at
// m = 32 on a quiet core (BenchmarkSearchExact) and 4.0 / 7.2 ms at m = 19 /
// 32 under load (BenchmarkSimilar), about the most that fits the
// 10 ms request budget (docs/design.md#targets) on two shared cores.
const DefaultApproxAbove = 100_000

// SearchOptions choose between exact and approximate search.
type SearchOptions struct {
	// ApproxAbove: catalogues with more items than this get an HNSW index
	// (0 = DefaultApproxAbove; negative = always exact).
	ApproxAbove int
	HNSW        HNSWOptions
}

// Searcher pairs a metric with the exact index of the catalogue projected by
// it and, for large catalogues, an approximate HNSW index over the same
// vectors: the content side of GET /items/{id}/similar and POST
// /search/similar (docs/design.md#api, #retrieval). Like its parts it is safe for
// concurrent searches; the Index must not be modified once Approx is built.
type Searcher struct {
	Metric *Metric
	Index  *Index
	Approx *HNSW // nil: exact search
}

// NewSearcher projects every item (row i gets id i) and indexes it exactly.
func NewSearcher(m *Metric, items [][]float64) (*Searcher, error) {
	return NewSearcherWith(m, items, SearchOptions{ApproxAbove: -1})
}

// NewSearcherWith is NewSearcher that also builds an HNSW index when the
// catalogue has more than opt.ApproxAbove items.
func NewSearcherWith(m *Metric, items [][]float64, opt SearchOptions) (*Searcher, error) {
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
	s := &Searcher{Metric: m, Index: ix}
	limit := opt.ApproxAbove
	if limit == 0 {
		limit = DefaultApproxAbove
	}
	if limit >= 0 && ix.Len() > limit {
		if s.Approx, err = BuildHNSW(ix, opt.HNSW); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Approximate reports whether searches go through the HNSW index.
func (s *Searcher) Approximate() bool { return s.Approx != nil }

// SimilarToItem returns the k items nearest to item id under the metric,
// leaving out id itself and any id exclude rejects (exclude may be nil).
func (s *Searcher) SimilarToItem(id, k int, exclude func(id int) bool) ([]Neighbour, error) {
	if id < 0 || id >= s.Index.Len() {
		return nil, fmt.Errorf("retrieval: item %d not indexed", id)
	}
	if s.Approx != nil {
		return s.Approx.SearchID(id, k, exclude), nil
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
	if s.Approx != nil {
		return s.Approx.Search(q, k, exclude), nil
	}
	return s.Index.Search(q, k, exclude), nil
}
