// Package recsys holds the collaborative-filtering algorithms of the
// service: the binary relevance matrix X (dissertation §4.3), cosine and
// KUNN neighbourhoods (§4.5.2–4.5.6), the item-p / user-p / KUNN / SLIM
// scorers (§4.5.5, §4.7.2), EASE, RP3β and popularity, all behind one
// Model interface and one registry of model kinds (Register). Families of
// models live in sub-packages that register themselves: recsys/febr
// (FEBR, OPT-ADG and the learnt blend febr-blend, §4.5–4.6) and recsys/mf
// (the matrix factorisations), built on the pieces this package exports
// for them (neighbour lists, user neighbourhoods, the fsSLIM solver, the
// model codec, parallel loops).
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
//
// It is pure computation: no HTTP, no storage. Indices are dense uint32
// user and item numbers; string ids live at the edges of the program.
package recsys
