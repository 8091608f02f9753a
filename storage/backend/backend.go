// Package backend is the interface of a recsys store as the rest of the
// program uses it. The bbolt store (storage) and the PostgreSQL store
// (storage/postgres) both implement it, and storage/storagetest checks
// that they answer alike.
package backend

import (
	"context"
	"io"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/dump"
)

// Store is every service a store gives the rest of recsys.
type Store interface {
	api.InteractionService
	api.UserService
	api.ItemService
	api.StatsService
	api.ModelStore
	api.JobStore
	api.ReportStore
	api.OnlineStore
	api.RuleStore
	Snapshot(ctx context.Context) (*api.Snapshot, error)
	NewModelVersion(ctx context.Context) (string, error)
	Profile(ctx context.Context, userID string) (api.Profile, error)
	Catalogue(ctx context.Context) (*api.Catalogue, error)
	Versions() (items, events uint64)
	UserIDs(ctx context.Context, idx []uint32) ([]string, error)
	ItemFeatures(ctx context.Context) ([]string, [][]float64, error)
	ItemAttributes(ctx context.Context) (*api.ItemAttributes, error)
	ItemsInteracted(ctx context.Context, idx []uint32) ([]bool, error)
	dump.Dumper
	// Backup streams a consistent copy of the database as one file
	// (bbolt: Store.Backup); the PostgreSQL store answers not_implemented,
	// naming pg_dump.
	Backup(ctx context.Context, start func(size int64) (io.Writer, error)) (int64, error)
	Policy() api.Policy
	// Size is the database's size in bytes.
	Size() int64
	Close() error
}
