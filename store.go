package main

import (
	"context"
	"fmt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/postgres"
)

// openStore opens the store --db names: a postgres:// (or postgresql://)
// URL selects the PostgreSQL store, anything else is a bbolt file.
// maxSize caps a bbolt file (0: no cap); a PostgreSQL server manages its
// own disk.
func openStore(ctx context.Context, db string, policy api.Policy, maxSize int64) (backend.Store, error) {
	if postgres.IsDSN(db) {
		if maxSize != 0 {
			return nil, fmt.Errorf("--max-db-size caps a bbolt file; it does not apply to a PostgreSQL database")
		}
		return postgres.Open(ctx, db, postgres.Options{Policy: policy})
	}
	return storage.Open(db, storage.Options{Policy: policy, MaxSize: maxSize})
}
