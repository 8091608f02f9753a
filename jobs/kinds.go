package jobs

import (
	"context"
	"fmt"
	"slices"

	"recsys/api"
	"recsys/recsys"
)

// A trainer fits one kind of served model that is not a recommender (the
// recommenders all fit through trainModels) on a job's snapshot: the model
// ready to persist and serve, or, when the data cannot support it, nil and
// the reason, which the job records (api.Job.Skipped). It calls enter when
// it starts its job stage.
type trainer func(ctx context.Context, snap *api.Snapshot, opts TrainOptions, enter func(stage string)) (_ *trained, skipped string, _ error)

// trainers holds the trainer of every kind that is not a recommender, by
// name; trainerOrder is their registration order.
var (
	trainers     = map[string]trainer{}
	trainerOrder []string
)

// registerTrainer adds the trainer of a kind of served model whose decoder
// package serving registered (serving.RegisterKind) under the same name.
// Each kind's own file calls it from init; it panics on a name taken.
func registerTrainer(name string, t trainer) {
	if _, dup := trainers[name]; dup || slices.Contains(recsys.Names(), name) {
		panic(fmt.Sprintf("jobs: trainer %q registered twice", name))
	}
	trainers[name] = t
	trainerOrder = append(trainerOrder, name)
}

// TrainableNames lists what a training job can fit: the recommenders of
// package recsys, then the other kinds that registered a trainer (the
// content metric).
func TrainableNames() []string { return append(recsys.Names(), trainerOrder...) }

// Trainable reports whether a training job can fit name.
func Trainable(name string) bool { return slices.Contains(TrainableNames(), name) }

// Recommender reports whether name is a recommender of the registry: a
// model that ranks items for a user, which evaluations, activation and
// ?model= accept. The content metric is not one.
func Recommender(name string) bool { return slices.Contains(recsys.Names(), name) }

// distinct is names without repeats, in their first order.
func distinct(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// fitAll fits the models a job names: the recommenders through
// trainModels, tuned on one validation split with shared neighbour caches,
// then each other kind by its trainer, in the job's order, when the
// recommenders' share of the progress is done. It returns the fitted
// models in that order, and those skipped with the reason.
func fitAll(ctx context.Context, snap *api.Snapshot, names []string, opts TrainOptions, stage stageFunc) ([]trained, []api.SkippedModel, error) {
	var recommenders, others []string
	for _, n := range names {
		if Recommender(n) {
			recommenders = append(recommenders, n)
		} else {
			others = append(others, n)
		}
	}
	out, err := trainModels(ctx, snap, recommenders, opts, stage)
	if err != nil {
		return nil, nil, err
	}
	var skipped []api.SkippedModel
	for _, name := range others {
		train, ok := trainers[name]
		if !ok {
			return nil, nil, fmt.Errorf("no trainer for model %q", name)
		}
		t, why, err := train(ctx, snap, opts, func(s string) { stage(s, 1) })
		if err != nil {
			return nil, nil, err
		}
		if t == nil {
			skipped = append(skipped, api.SkippedModel{Model: name, Reason: why})
			continue
		}
		out = append(out, *t)
	}
	return out, skipped, nil
}
