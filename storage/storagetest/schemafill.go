package storagetest

import (
	"context"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// This file is the workload of the schema fixtures (storage/testdata/schema
// and storage/postgres/testdata/schema): storage/testdata/schema/README.md
// says how each fixture was made by the code of its schema version running
// SchemaFill. It uses only what every schema version's store offers, so that
// it compiles against the old code unchanged (package name aside), and the
// tests run it against today's store for the reference to compare with.

// SchemaFillStore is what SchemaFill writes through.
type SchemaFillStore interface {
	PutItems(ctx context.Context, items []api.Item) error
	AddInteractions(ctx context.Context, evs []api.Interaction) (int, error)
	DeleteInteraction(ctx context.Context, userID, itemID string) error
	DeleteUser(ctx context.Context, id string) error
	NewModelVersion(ctx context.Context) (string, error)
	PutModel(ctx context.Context, info api.ModelInfo, blob []byte) error
	SetActiveModel(ctx context.Context, name string) error
	NewJobID(ctx context.Context) (string, error)
	PutJob(ctx context.Context, j api.Job) error
	PutReport(ctx context.Context, r *api.Report) error
}

// SchemaFillNow is the clock of a store SchemaFill writes to: item records
// take their times from it.
func SchemaFillNow() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }

// SchemaFillBlob is the model blob SchemaFill stores.
var SchemaFillBlob = []byte("schema fixture: the bytes of a model")

// SchemaFill writes items (features, categories, labels, a hidden one),
// events of several types over several days (a repeat on a later day, a
// value, a negative, a rating below and above the threshold, an item first
// seen in an event), a deleted pair and a deleted user, a model version
// made active, a job and a report.
func SchemaFill(ctx context.Context, s SchemaFillStore) error {
	day := func(d, h int) time.Time { return time.Date(2026, 11, 1+d, 10+h, 0, 0, 0, time.UTC) }
	if err := s.PutItems(ctx, []api.Item{
		{ID: "m1", Features: map[string]float64{"action": 1, "comedy": 0}, Categories: []string{"action"}, Labels: map[string]string{"title": "Heat"}},
		{ID: "m2", Features: map[string]float64{"comedy": 1}, Categories: []string{"comedy", "drama"}, Hidden: true},
		{ID: "m3", Labels: map[string]string{"title": "Alien", "year": "1979"}},
	}); err != nil {
		return err
	}
	batches := [][]api.Interaction{{
		{UserID: "alice", ItemID: "m1", Type: "purchase", Timestamp: day(0, 0)},
		{UserID: "alice", ItemID: "m2", Type: "view", Timestamp: day(0, 1)},
		{UserID: "bob", ItemID: "m1", Type: "play", Value: 12, HasValue: true, Timestamp: day(1, 0)},
		{UserID: "bob", ItemID: "m3", Type: "view", Timestamp: day(1, 1)},
		{UserID: "carol", ItemID: "m3", Type: "dislike", Timestamp: day(3, 0)},
		{UserID: "carol", ItemID: "m1", Type: "rating", Value: 3, HasValue: true, Timestamp: day(3, 1)},
		{UserID: "carol", ItemID: "m2", Type: "rating", Value: 5, HasValue: true, Timestamp: day(3, 2)},
		{UserID: "dave", ItemID: "m2", Type: "view", Timestamp: day(4, 0)},
		{UserID: "erin", ItemID: "m1", Type: "view", Timestamp: day(4, 1)},
	}, {
		{UserID: "alice", ItemID: "m1", Type: "view", Timestamp: day(2, 0)},
		{UserID: "bob", ItemID: "m4", Type: "view", Timestamp: day(5, 0)},
		{UserID: "bob", ItemID: "m1", Type: "play", Value: 3, HasValue: true, Timestamp: day(5, 1)},
		{UserID: "dave", ItemID: "m1", Type: "click", Timestamp: day(5, 2)},
	}}
	for _, b := range batches {
		if _, err := s.AddInteractions(ctx, b); err != nil {
			return err
		}
	}
	if err := s.DeleteInteraction(ctx, "dave", "m2"); err != nil {
		return err
	}
	if err := s.DeleteUser(ctx, "erin"); err != nil {
		return err
	}
	v, err := s.NewModelVersion(ctx)
	if err != nil {
		return err
	}
	if err := s.PutModel(ctx, api.ModelInfo{Name: "popular", Version: v, TrainedAt: day(6, 0), Users: 4, Items: 4, Positives: 7,
		Params: map[string]float64{"k": 0}, Validation: map[string]float64{"adg": 0.5}, TrainSeconds: 0.25}, SchemaFillBlob); err != nil {
		return err
	}
	if err := s.SetActiveModel(ctx, "popular"); err != nil {
		return err
	}
	id, err := s.NewJobID(ctx)
	if err != nil {
		return err
	}
	if err := s.PutJob(ctx, api.Job{ID: id, Kind: "train", Models: []string{"popular"}, State: api.JobSucceeded, Trigger: "api",
		Progress: 1, CreatedAt: day(6, 0)}); err != nil {
		return err
	}
	return s.PutReport(ctx, &api.Report{Kind: "recommendation", Dataset: "fixture", Protocol: "standard", Folds: 3})
}
