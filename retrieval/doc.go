// Package retrieval is query-by-example over item feature vectors with a
// learned Mahalanobis metric W = LLᵀ (docs/design.md#retrieval; dissertation §1.1, ch. 2–3;
// seed 002).
//
// Works cited in the comments are listed in docs/references.md.
//
// Learning (Learn) takes raw feature rows and a Supervision — class labels
// (FromLabels) or a neighbour graph such as the items' collaborative
// k-nearest neighbours (FromNeighbours), so that a content metric mimics
// collaborative similarity and items without interactions still get similar
// items (cold start). The methods are:
//
//   - euclidean: W = I on z-scored features (the baseline);
//   - mlr-auc, mlr-p@k, mlr-map, mlr-mrr, mlr-ndcg: MLR (seed 002 Alg. 1,
//     package mlr), the 1-slack cutting plane with the tr(W) regulariser and
//     a separation oracle per ranking measure; the working-set problem is
//     solved by projected sub-gradient descent (mlr.Subgradient);
//   - rmlr: R-MLR (dissertation Alg. 2.1, package rmlr) adds the ℓ2,1
//     row-sparsity penalty and solves the working-set problem by ADMM (§2.3);
//   - frml, frml-auc: FRML-WARP (dissertation Alg. 3.2–3.4, package frml),
//     stochastic Riemannian descent of a rank-m factor with β-terminated WARP
//     sampling; frml-auc is β = 1.
//
// A Metric stores the z-scoring statistics of its training features with L,
// so an unseen query vector is standardised exactly like the catalogue.
// Items are stored projected (Lᵀz(x), dimension m) in an Index; a Searcher
// bundles the two. Metric and Index have binary Marshal/Unmarshal.
//
// # Exact search and when to go approximate
//
// Index.Search scans all n items at O(m) each, with an early exit on partial
// distances: about 1.1 ns per stored coordinate on one core of the 2-core
// reference machine, so 100,000 items at m = 32 take a few milliseconds per
// query (BenchmarkSimilar; numbers in docs/performance.md).
// That is DefaultApproxAbove = 100,000 items: above it NewSearcherWith (and
// the service, flag --content-approx-above) also builds an HNSW graph
// (Malkov and Yashunin 2018) over the same projected vectors and answers from
// it. HNSW's recall@10 against Index is tested (TestHNSW_recall) and
// reported by BenchmarkSimilar; a filtered query that the graph cannot
// satisfy (e.g. cold items only) falls back to the exact scan. A graph's
// links can be persisted (HNSW.Graph, HNSWGraph) and attached again to the
// vectors it was built on (AttachHNSW; Index.Fingerprint tells them).
//
// # Evaluation
//
// The offline evaluation behind `recsys eval-retrieval` (the seed 002 §5.1
// protocol and the cold-start evaluation) is package retrieval/eval; this
// package keeps the algorithms it measures.
package retrieval
