package jobs

// DefaultFEBRLambda is the service's λ grid for FEBR, shorter than the
// evaluation's (recsys.DefaultFEBRLambdas) to keep retraining quick.
// FEBR's search (recsys.Kind.Search) chooses k and, for the SLIM
// affinity, the fsSLIM constants by the validation ADG of the aggsum
// predictor OPT-ADG starts from (TrainOptions.tuning), then λ by OPT-ADG
// stopping early on the validation ADG; the chosen parameters refit on
// all the data with the iteration count that reached the chosen θ, as
// there are no validation items left to stop on.
var DefaultFEBRLambda = []float64{1e-3, 1e-2}
