// Package retrieval is query-by-example over item feature vectors with a
// learned Mahalanobis metric W = LLᵀ (SPEC.md §5; dissertation §1.1, ch. 2–3;
// seed 002).
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
// distances. BenchmarkSearchExact (numbers in README.md in this folder)
// measures a top-10 query at about 1.1 ns per stored coordinate on one core
// of the 2-core reference machine: 0.33 ms for 10,000 items and 3.5 ms for
// 100,000 items at m = 32. That fits the SPEC's 10 ms request budget up to
// roughly n·m ≈ 3·10⁶ (100,000 items at m = 32, 200,000 at m = 16) with
// headroom for concurrent requests on two cores; above that catalogue size
// an approximate index (HNSW or IVF over the projected vectors, validated by
// its recall@k against Index) is needed. None is implemented yet.
//
// # Evaluation
//
// Evaluate runs the protocol of seed 002 §5.1 (`recsys eval-retrieval`):
// random 80/20 train/test splits, z-scoring with training statistics,
// hyper-parameters chosen on a validation part of the training set, kNN
// error, MAP, AUC, P@1 and P@10 of test queries against the training set.
package retrieval
