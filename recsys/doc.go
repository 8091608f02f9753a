// Package recsys holds the collaborative-filtering algorithms of the
// service: the binary relevance matrix X (dissertation §4.3), cosine and
// KUNN neighbourhoods (§4.5.2–4.5.6), the item-p / user-p / KUNN / SLIM
// scorers (§4.5.5, §4.7.2), FEBR (§4.5–4.6) and popularity, all behind one
// Model interface.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
//
// It is pure computation: no HTTP, no storage. Indices are dense uint32
// user and item numbers; string ids live at the edges of the program.
//
// # FEBR
//
// FEBR (febr.go, febr_features.go, febr_opt.go, febr_search.go) ranks by a
// linear function of features of each (user, item) pair: the mean, std,
// min, max, length/k and sum of the affinities of the user's items among
// the item's k neighbours (FEBRi), of the users among the user's k
// neighbours who consumed the item (FEBRu), or both (FEBRiu), over the
// cosine, KUNN or fsSLIM affinities, plus a missing-feature indicator per
// side (§4.5.4; the dissertation's single indicator for FEBRiu is split in
// two, one per side, as either side can be missing alone). Features are
// z-scored with their mean and standard deviation over the training
// pairs that have them. θ is learnt by OPT-ADG (Algorithm 4.2) from the
// aggsum predictor (θ = 1 on aggsum: item-p, user-p or SLIM exactly), with
// averaged SGD and early stopping on the validation ADG that keeps the
// best θ, so a fit is never worse than its starting predictor on the
// validation items.
//
// Training pairs. Algorithm 4.2 draws i⁺ from O⁺u and takes the features
// of (u, i⁺) from X itself, so the affinities of a training positive
// include u's own co-occurrences, unlike those of the held-out and future
// items the model ranks; OPT-ADG then lowers the training loss while the
// validation ADG falls (measured on MovieLens, FEBRi-SLIM: training ADG
// 0.2995 → 0.3060 while validation peaks after 20,000 iterations and
// declines). FEBROptions.Holdout instead draws i⁺ from a held-out share
// of each user's positives and computes all training features without
// them (affinities refitted on the rest). It is off by default, as in the
// dissertation: on one split with k = 50 it helped FEBRiu-KUNN on Last.fm
// (validation ADG +0.001) and FEBRi-cosine on MovieLens, and hurt
// FEBRi-SLIM on both.
//
// Storage (§4.5.6). Neighbour lists and affinities take O(n·k): the item
// side keeps KNN(i) with A(i, j) and the reversed lists; the user side
// keeps the training matrix and computes KNN(u) from the live history.
// Features are never stored for all |U|·|I| pairs. They are computed per
// user, in one pass over the reversed lists of the user's items and the
// rows of the user's neighbours (the cost of scoring the user), for the
// candidates only: the items with a non-missing feature. Every other item
// has the same (missing) vector, hence the same score, and TopN orders
// them by popularity. Serving does this per request from the live
// history. Training memoises every training user's block — the
// candidates' z-scored features as float64, with the positions of the
// user's positives and negatives, so that each WARP draw costs one
// d-dimensional dot product, and a draw that falls outside the candidates
// costs nothing — when the memo fits FEBROptions.MemoryBudget (2 GiB by
// default; the service's training bounds it at 256 MiB, so that FEBR's
// memory stays O(n·k_max) plus that constant); otherwise each run of
// EvalEvery iterations draws its users first and builds each drawn user's
// block once, a batch of users in parallel (O(|I|·d) per block).
// Validation ADGs are also computed from the blocks, counting the missing
// block by popularity positions instead of ranking the catalogue.
//
// Measured candidates and memo sizes (float64 features; FEBRiu has 14
// features per pair, the others 7):
//
//	data (users × items)          k      FEBRi candidates      memo   FEBRiu memo
//	MovieLens 100K (942 × 1447)   50     0.69 M (51% of pairs)  44 MB   95 MB
//	                              200    1.16 M (85%)           74 MB  146 MB
//	                              1000   1.26 M (92%)           81 MB  151 MB
//	Last.fm HetRec (1892 × 17632) 50     6.5 M (19%)           415 MB  857 MB
//	                              200   11.1 M (33%)           713 MB  1.40 GB
//	                              1000  12.2 M (37%)           783 MB  1.47 GB
//
// (training splits of §4.7.4, fold 1; dense feature matrices would take
// 76 MB for MovieLens FEBRi, 1.9 GB and 3.7 GB for Last.fm FEBRi and
// FEBRiu.)
package recsys
