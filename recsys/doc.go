// Package recsys holds the collaborative-filtering algorithms of the
// service: the binary relevance matrix X (dissertation §4.3), cosine and
// KUNN neighbourhoods (§4.5.2–4.5.6), the item-p / user-p / KUNN / SLIM
// scorers (§4.5.5, §4.7.2) and popularity, all behind one Model interface.
//
// It is pure computation: no HTTP, no storage. Indices are dense uint32
// user and item numbers; string ids live at the edges of the program.
package recsys
