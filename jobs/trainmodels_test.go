package jobs

import (
	"context"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// trainModels is fitAll's fit of the recommenders names on the snapshot,
// in the order given, for the tests that look at the fits themselves.
func trainModels(ctx context.Context, snap *api.Snapshot, names []string, opts TrainOptions, stage stageFunc) ([]trained, error) {
	if len(snap.Users) == 0 {
		return nil, api.Errorf(api.CodeConflict, "there are no relevant interactions to train on")
	}
	x, err := snapshotMatrix(snap)
	if err != nil {
		return nil, err
	}
	out, _, err := trainModelsOn(ctx, snap, x, names, opts, stage, nil, time.Time{})
	return out, err
}
