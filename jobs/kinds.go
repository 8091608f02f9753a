package jobs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"recsys/api"
	"recsys/recsys"
	"recsys/recsys/serving"
)

// TrainableNames lists what a training job can fit: every registered
// kind (recsys.Kinds), the recommenders first.
func TrainableNames() []string { return recsys.Kinds() }

// Trainable reports whether a training job can fit name.
func Trainable(name string) bool {
	_, err := recsys.KindOf(name)
	return err == nil
}

// Recommender reports whether name is a recommender (recsys.Recommends):
// a model that ranks items for a user, which evaluations, activation and
// ?model= accept. The content metric is not one.
func Recommender(name string) bool { return recsys.Recommends(name) }

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
	out, err := trainModels(ctx, snap, fitOrder(recommenders), opts, stage)
	if err != nil {
		return nil, nil, err
	}
	var skipped []api.SkippedModel
	for _, name := range others {
		t, why, err := trainOther(ctx, snap, name, opts, func(s string) { stage(s, 1) })
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

// trainOther fits a kind that is not a recommender by its registered
// Train: the model ready to persist and serve, or, when the data cannot
// support it, nil and the reason, which the job records
// (api.Job.Skipped). enter is called as each stage of the fit starts.
func trainOther(ctx context.Context, snap *api.Snapshot, name string, opts TrainOptions, enter func(stage string)) (_ *trained, skipped string, _ error) {
	kind, err := recsys.KindOf(name)
	if err != nil || kind.Train == nil {
		return nil, "", fmt.Errorf("model %q has no trainer", name)
	}
	start := time.Now()
	x, err := snapshotMatrix(snap)
	if err != nil {
		return nil, "", err
	}
	t, why, err := kind.Train(ctx, recsys.TrainData{X: x, FeatureNames: snap.FeatureNames, Features: snap.Features,
		Seed: uint64(opts.Seed), Enter: enter})
	if err != nil || t == nil {
		return nil, why, err
	}
	blob, err := t.Model.MarshalBinary()
	if err != nil {
		return nil, "", err
	}
	// Validation holds the recommenders' measures, compared across
	// models: other kinds have none.
	info := api.ModelInfo{Name: name, TrainedAt: time.Now().UTC(), Users: countIDs(snap.UserIDs),
		Items: t.Items, Positives: len(snap.Users), TrainSeconds: time.Since(start).Seconds(),
		Params: t.Params, Validation: map[string]float64{}}
	return &trained{served: &serving.Served{Info: info, Model: t.Model}, blob: blob}, "", nil
}
