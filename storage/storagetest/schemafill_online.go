package storagetest

import (
	"context"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// SchemaFillOnlineStore is what SchemaFillOnline writes through: the
// online tables, which schema version 4 of the bbolt store and version 3
// of PostgreSQL's added.
type SchemaFillOnlineStore interface {
	PutImpressions(ctx context.Context, imps []api.Impression) error
	Attribute(ctx context.Context, touches []api.Touch, window time.Duration) ([]api.Attributed, error)
	CreateExperiment(ctx context.Context, e api.Experiment) (api.Experiment, error)
	StopExperiment(ctx context.Context, id string, at time.Time) (api.Experiment, error)
}

// SchemaFillImpressions are the lists SchemaFillOnline records.
func SchemaFillImpressions() []api.Impression {
	at := func(min int) time.Time { return time.Date(2026, 11, 7, 9, min, 0, 0, time.UTC) }
	return []api.Impression{
		{ID: api.NewRecommendationID(at(0), "f", 1), UserID: "alice", Model: "popular", ModelVersion: "v000001",
			Items: []string{"m3", "m4"}, At: at(0)},
		{ID: api.NewRecommendationID(at(30), "f", 2), UserID: "bob", Model: "itemknn", ModelVersion: "v000002",
			Experiment: "x000001", Arm: "b", Items: []string{"m2", "m3"}, At: at(30)},
	}
}

// SchemaFillOnline records two lists, credits a click on one of them, and
// runs and stops an experiment.
func SchemaFillOnline(ctx context.Context, s SchemaFillOnlineStore) error {
	imps := SchemaFillImpressions()
	if err := s.PutImpressions(ctx, imps); err != nil {
		return err
	}
	if _, err := s.Attribute(ctx, []api.Touch{{RecommendationID: imps[0].ID, UserID: "alice", ItemID: "m4",
		At: time.Date(2026, 11, 7, 9, 5, 0, 0, time.UTC)}}, time.Hour); err != nil {
		return err
	}
	x, err := s.CreateExperiment(ctx, api.Experiment{Name: "knn-vs-pop", Arms: []api.Arm{{Model: "popular", Share: 50}, {Model: "itemknn", Share: 50}},
		Alpha: 0.05, MinImpressions: 100, CreatedAt: time.Date(2026, 11, 7, 8, 0, 0, 0, time.UTC)})
	if err != nil {
		return err
	}
	_, err = s.StopExperiment(ctx, x.ID, time.Date(2026, 11, 8, 8, 0, 0, 0, time.UTC))
	return err
}
