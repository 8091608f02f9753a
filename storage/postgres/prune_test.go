package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// TestPruneImpressions_oneReplica: while another session prunes (holds the
// pruning lock of the schema), a replica's PruneImpressions deletes
// nothing and returns 0; once that session ends, it deletes the old lists.
func TestPruneImpressions_oneReplica(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	s := openOn(t, dsn)
	old := time.Now().Add(-time.Hour)
	imps := []api.Impression{
		{ID: api.NewRecommendationID(old, "r", 1), UserID: "u1", Model: "itemknn", Items: []string{"i1"}, At: old},
		{ID: api.NewRecommendationID(old.Add(time.Second), "r", 2), UserID: "u1", Model: "itemknn", Items: []string{"i2"}, At: old.Add(time.Second)},
	}
	if err := s.PutImpressions(ctx, imps); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('recsys prune ' || current_schema()))`); err != nil {
		t.Fatal(err)
	}
	cut := time.Now().Add(-time.Minute)
	if n, err := s.PruneImpressions(ctx, cut, 10); err != nil || n != 0 {
		t.Fatalf("PruneImpressions while another session prunes: %d, %v; want 0", n, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneImpressions(ctx, cut, 10); err != nil || n != 2 {
		t.Fatalf("PruneImpressions once it ended: %d, %v; want 2", n, err)
	}
}
