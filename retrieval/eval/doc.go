// Package eval is the offline evaluation of the learned metrics of package
// retrieval, as recsys/eval is of the recommenders (`recsys
// eval-retrieval`).
//
// Works cited in the comments are listed in docs/references.md.
//
// Evaluate runs the protocol of seed 002 §5.1 on a labelled data set
// (ReadCSV): random 80/20 train/test splits, z-scoring with training
// statistics, hyper-parameters chosen on a validation part of the training
// set, kNN error, MAP, AUC, P@1 and P@10 of test queries against the
// training set. ColdStart (`recsys eval-retrieval --coldstart`) holds out
// items of an interaction data set (LoadInteractions), learns the metric
// from the collaborative neighbours of the rest and measures how content
// recovers collaborative neighbours and how cold items reach their users
// (REC@10). WriteTable and WriteColdStartTable print the reports.
package eval
