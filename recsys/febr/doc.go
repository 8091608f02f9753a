// Package febr is Feature-Extraction-Based Ranking (dissertation
// §4.5–4.6): FEBR's seven variants, their learning to rank by OPT-ADG
// (Algorithm 4.2), their hyper-parameter search (§4.7.3) and febr-blend,
// FEBR's linear ranker over the scores of several base models. It
// registers its models with recsys.Register from init (variants.go); a
// fit or search takes its options as recsys.Params.Options, an *Options.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
//
// # Features
//
// FEBR (model.go, extractor.go, features.go) ranks by a linear function
// of features of each (user, item) pair: the mean, std, min, max,
// length/k and sum of the affinities of the user's items among the item's
// k neighbours (FEBRi), of the users among the user's k neighbours who
// consumed the item (FEBRu), or both (FEBRiu), over the cosine, KUNN or
// fsSLIM affinities, plus a missing-feature indicator per side (§4.5.4;
// the dissertation's single indicator for FEBRiu is split in two, one per
// side, as either side can be missing alone). Features are z-scored with
// their mean and standard deviation over the training pairs that have
// them. θ is learnt by OPT-ADG (opt.go) from the aggsum predictor (θ = 1
// on aggsum: item-p, user-p or SLIM exactly), with averaged SGD and early
// stopping on the validation ADG that keeps the best θ (validation.go), so
// a fit is never worse than its starting predictor on the validation
// items.
//
// # Training pairs
//
// Algorithm 4.2 draws i⁺ from O⁺u and takes the features of (u, i⁺) from X
// itself, so the affinities of a training positive include u's own
// co-occurrences, unlike those of the held-out and future items the model
// ranks; OPT-ADG then lowers the training loss while the validation ADG
// falls (docs/performance.md, "FEBR's training pairs"). Options.Holdout
// instead draws i⁺ from a held-out share of each user's positives and
// computes all training features without them (affinities refitted on the
// rest, holdout.go). It is off by default, as in the dissertation: it
// helps some variants and data sets and hurts others (the same section).
//
// # Storage (§4.5.6)
//
// Neighbour lists and affinities take O(n·k): the item side keeps KNN(i)
// with A(i, j) and the reversed lists; the user side keeps the training
// matrix and computes KNN(u) from the live history. Features are never
// stored for all |U|·|I| pairs. They are computed per user, in one pass
// over the reversed lists of the user's items and the rows of the user's
// neighbours (the cost of scoring the user), for the candidates only: the
// items with a non-missing feature. Every other item has the same
// (missing) vector, hence the same score, and TopN orders them by
// popularity. Serving does this per request from the live history.
// Training memoises every training user's block (trainset.go) — the
// candidates' z-scored features as float64, with the positions of the
// user's positives and negatives, so that each WARP draw costs one
// d-dimensional dot product, and a draw that falls outside the candidates
// costs nothing — when the memo fits Options.MemoryBudget (DefaultMemory;
// the service's training bounds it lower, so that FEBR's memory stays
// O(n·k_max) plus that constant). The memo takes 8·d + 4 bytes per
// candidate pair (d = 7 features per side), the candidates' share of the
// pairs growing with k (docs/performance.md, "FEBR's feature memo").
// Otherwise OPT-ADG computes the features of just the pairs a step looks
// at from the user's view (view.go), to the bit the memo's values.
// Validation ADGs are also computed from the blocks, counting the missing
// block by popularity positions instead of ranking the catalogue
// (blockrank.go).
//
// # febr-blend
//
// The blend (blend.go and the blend_*.go files) scores Σ_b θ_b z_b(u, i),
// each base model's scores z-scored per user, with θ learnt on held-out
// positives of a stack of the bases refitted without them (blend_stack.go,
// blend_learn.go), and its search chooses between the learnt θ and each
// base alone (blend_search.go).
package febr
