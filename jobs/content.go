package jobs

import (
	"context"
	"fmt"
	"time"

	"recsys/api"
	"recsys/recsys"
	"recsys/recsys/serving"
	"recsys/retrieval"
)

// The content metric trains here; it is served, persisted and loaded as
// the kind serving.ContentModelName (recsys/serving/content.go).
func init() { registerTrainer(serving.ContentModelName, trainContent) }

// contentNeighbours is |X⁺q|: how many collaborative neighbours of an item
// the content metric learns to rank first (dissertation §3.2).
const contentNeighbours = 10

// minContentItems is the fewest items with both features and
// collaborative neighbours that the content metric learns from.
const minContentItems = 20

// learnContent learns a content metric supervised by the collaborative
// neighbours of the items that have both features and interactions, so
// that items with features but no interactions get similar items too. With
// fewer than minContentItems such items it learns nothing and returns
// their count.
func learnContent(ctx context.Context, snap *api.Snapshot, x *recsys.Matrix, seed uint64) (*retrieval.Metric, int, error) {
	if len(snap.FeatureNames) == 0 {
		return nil, 0, nil
	}
	nb, err := recsys.ItemCosineKNN(ctx, x, contentNeighbours, nil)
	if err != nil {
		return nil, 0, err
	}
	var rows []int // dense item indices with features and neighbours
	row := map[int]int{}
	for i := 0; i < x.Items() && i < len(snap.Features); i++ {
		if snap.Features[i] != nil && nb.Rows() > i && len(nb.Row(i)) > 0 {
			row[i] = len(rows)
			rows = append(rows, i)
		}
	}
	if len(rows) < minContentItems {
		return nil, len(rows), nil // too little supervision to learn from
	}
	X := make([][]float64, len(rows))
	rel := make([][]int, len(rows))
	for r, i := range rows {
		X[r] = snap.Features[i]
		for _, n := range nb.Row(i) {
			if q, ok := row[int(n.Index)]; ok {
				rel[r] = append(rel[r], q)
			}
		}
	}
	sup, err := retrieval.FromNeighbours(rel)
	if err != nil {
		return nil, 0, err
	}
	m, err := retrieval.Learn(ctx, X, sup, retrieval.LearnOptions{Method: retrieval.MethodFRML,
		Iterations: 10000, Segment: 2500, Seed: seed})
	return m, len(rows), err
}

// trainContent learns the content metric when items have features; when
// there is too little to learn from, it returns no model and says why.
func trainContent(ctx context.Context, snap *api.Snapshot, opts TrainOptions, enter func(stage string)) (_ *trained, skipped string, _ error) {
	const kept = "; the content model served before, if any, stays"
	switch {
	case len(snap.FeatureNames) == 0:
		return nil, "no item has features (PUT /items with \"features\")" + kept, nil
	case len(snap.Users) == 0:
		return nil, "there are no relevant interactions to learn from" + kept, nil
	}
	enter("content metric")
	start := time.Now()
	x, err := snapshotMatrix(snap)
	if err != nil {
		return nil, "", err
	}
	m, n, err := learnContent(ctx, snap, x, uint64(opts.Seed))
	if err != nil {
		return nil, "", err
	}
	if m == nil {
		return nil, fmt.Sprintf("only %d items have both features and collaborative neighbours; learning the metric needs at least %d", n, minContentItems) + kept, nil
	}
	model := serving.NewContent(snap.FeatureNames, m)
	blob, err := model.MarshalBinary()
	if err != nil {
		return nil, "", err
	}
	info := api.ModelInfo{Name: serving.ContentModelName, TrainedAt: time.Now().UTC(), Users: countIDs(snap.UserIDs),
		Items: n, Positives: len(snap.Users), TrainSeconds: time.Since(start).Seconds(),
		Params:     map[string]float64{"rank": float64(m.Rank()), "features": float64(m.Dim()), "neighbours": contentNeighbours},
		Validation: map[string]float64{}}
	return &trained{served: &serving.Served{Info: info, Model: model}, blob: blob}, "", nil
}
