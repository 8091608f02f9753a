// Package mf holds the matrix factorisation recommenders of docs/design.md#models:
//
//   - bpr: Bayesian Personalised Ranking (Rendle et al. 2009; lecture seed
//     004): SGD on sampled triples (u, i⁺, j⁻) with item biases and ℓ2
//     regularisation.
//   - wrmf: weighted regularised matrix factorisation (Hu et al. 2008):
//     alternating least squares with confidence 1 + α on the positives,
//     conjugate-gradient solves and the YᵀY precomputation.
//   - ials: iALS as Rendle et al. (2022) tune it: weight α₀ on every
//     unobserved cell, frequency-scaled regularisation λ(|Iᵤ| + α₀|I|)^ν,
//     N(0, σ²/d) initial factors, the same CG-within-ALS solver as wrmf.
//   - mfauc: matrix factorisation for (local) AUC (seed 003 §2): the
//     objective of Eq. 3 with the square-hinge, square, sigmoid or logistic
//     loss, tanh rank weighting, item-distribution exponent τ, row and
//     column sampling, and the parallel blockwise SGD of §2.2.1.
//
// The models register themselves with recsys under those names; import the
// package for its side effect wherever models are listed by name.
//
// Every model keeps user factors U (one row per training user) and item
// factors V, and scores item i for a user u as u·vᵢ (plus a bias for bpr).
// Score works from the live history: when it equals the training history of
// a user (found by a 64-bit hash of the history), that user's fitted factor
// is used; otherwise the user is folded in (FoldIn): wrmf and ials solve the
// ALS normal equations exactly, bpr and mfauc run seeded SGD on the user's
// factor alone with V fixed, averaging the iterates of the second half.
//
// Hyper-parameters come from recsys.Params: K is the number of factors
// (the main parameter of dissertation §4.7.3) and Extra carries the others
// under the keys each model documents. Every random process is seeded
// (Extra["seed"], default 1): the same data, parameters and seed give the
// same model.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to seed 003.
package mf
