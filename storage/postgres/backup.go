package postgres

import (
	"context"
	"io"

	"github.com/recsys-engine/recsys/api"
)

// Backup refuses: a PostgreSQL database is backed up by its own tools,
// which copy it consistently while the servers run (docs/operations.md, Back up and restore).
func (s *Store) Backup(context.Context, func(size int64) (io.Writer, error)) (int64, error) {
	return 0, api.Errorf(api.CodeNotImplemented, "this server stores its data in PostgreSQL, which GET /admin/backup cannot copy: "+
		"back it up with pg_dump -Fc (a consistent copy while the servers run) and restore it with pg_restore into an empty database")
}
