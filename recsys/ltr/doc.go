// Package ltr is LambdaMART, a second-stage ranker: gradient-boosted
// regression trees trained with λ-gradients (Burges 2010 §7, Alg. 1) to
// reorder a few hundred candidates per user by features of each candidate
// (the base models' scores and ranks, the item's popularity, the length of
// the user's history, ...).
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to Burges 2010.
//
// # Data
//
// Queries holds one query per user: a flat row-major float32 matrix of D
// features per candidate, the offsets of each query's rows and a 0/1 label
// per row (1 for a held-out positive). Train bins every feature once, at
// the quantiles of (a sample of) the training rows, into at most
// Options.Bins bins, and keeps one byte per feature per row; a split is
// "x[f] ≤ threshold" with the threshold one of the bin boundaries, which
// are feature values, so scoring raw values and training on bins agree.
//
// # λ-gradients
//
// In a query with scores s (ranks r from 0, by score and then by
// candidate index, see Order), each pair of a relevant candidate i and an
// irrelevant j has RankNet's logistic cost of s_i − s_j (§2), scaled by
// |ΔZ_ij|, the change of the query's measure when i and j swap ranks
// (LambdaRank, §4; seed 004 writes λ_ij = ∂L/∂o_ij · |ΔNDCG_ij|):
//
//	ρ_ij = 1 / (1 + exp(σ (s_i − s_j)))
//	λ_i  = Σ_j σ |ΔZ_ij| ρ_ij,   λ_j = −Σ_i σ |ΔZ_ij| ρ_ij
//	w_r  = Σ over the pairs of r of σ² |ΔZ_ij| ρ_ij (1 − ρ_ij)
//
// λ is the negative gradient of the cost (a relevant candidate is pushed
// up) and w its second derivative. With Measure ADG (the default, the
// measure of the product: dissertation Def. 4.2, Eq. 4.1),
//
//	|ΔZ_ij| = |1/log2(r_i+2) − 1/log2(r_j+2)| / |R⁺u|,
//
// and with NDCG the same difference of gains, each 0 at or past the cutoff
// Options.K, divided by the ideal DCG of min(|R⁺u|, K) relevant items
// (ΔNDCG). A query without a relevant candidate, or with only relevant
// ones, has no pair and no gradient.
//
// # Trees
//
// Each tree is grown best leaf first up to Options.MaxLeaves leaves (and
// Options.MaxDepth), a split taking the bin threshold that most lowers the
// quadratic model of the cost, ½ (G_L²/H_L + G_R²/H_R − G²/H) with G and
// H a child's Σλ and Σw (Chen and Guestrin 2016 §2.2), and leaving each
// child at least Options.MinLeaf rows. Histograms of (Σλ, Σw, count) per
// bin are built for the smaller child and subtracted from the parent's
// for the larger. Each leaf k then takes the Newton step
// γ_k = Σ_{i∈k} λ_i / Σ_{i∈k} w_i (Burges 2010 §6–§7) times the learning
// rate η (plus Options.L2 in the denominator, 0 by default), and
// the model's score is the sum of its trees' leaf values. Every tree is
// fitted to all the training rows; the only randomness is the row sample
// that places the bins, drawn from Options.Seed, so the same data and
// options give the same model on any machine.
//
// # Early stopping
//
// After each tree the mean measure of the validation queries (over those
// with a relevant candidate) is recomputed; training stops once
// Options.Patience trees have passed without a new best, and the model
// keeps the trees up to the best (Report.Trees, possibly 0).
//
// # Explanations
//
// Importance gives each feature's share of the total split gain and its
// number of splits; Explain splits one score into a bias and a
// contribution per feature along the row's decision paths (Saabas 2014).
// Models encode to a versioned binary form (MarshalBinary) whose decoder
// rejects corrupt input with an error.
package ltr
