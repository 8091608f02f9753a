package handlers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/recsys-engine/recsys/api"
)

// Backuper streams a consistent copy of the database (GET /admin/backup):
// it calls start with the copy's size once the copy is fixed, then writes
// it to the writer start returns. An error before start means nothing was
// sent.
type Backuper interface {
	Backup(ctx context.Context, start func(size int64) (io.Writer, error)) (int64, error)
}

// errHeadOnly stops a backup once HEAD has its headers.
var errHeadOnly = errors.New("HEAD: headers only")

// handleBackup streams the store's copy with its Content-Length, so that a
// client tells a cut stream from a whole one. The status goes out once the
// copy is fixed (the event log applied, the read transaction open); a
// failure after that cuts the connection, which the client sees as a body
// shorter than its Content-Length. The server's write timeout would cut a
// long copy: the route sets its own write deadline instead, moved on as
// the copy goes, so only a client that takes no data for the request
// timeout is cut off. HEAD answers the copy's headers without reading it.
func (h *handler) handleBackup(w http.ResponseWriter, r *http.Request) {
	if h.Backup == nil {
		h.writeError(w, r, api.Errorf(api.CodeNotImplemented, "this server has no store that GET /admin/backup can copy"))
		return
	}
	rc := http.NewResponseController(w)
	started := false
	n, err := h.Backup.Backup(r.Context(), func(size int64) (io.Writer, error) {
		dw := &deadlineWriter{w: w, rc: rc, idle: h.limits.RequestTimeout}
		if err := dw.extend(); err != nil {
			return nil, err
		}
		hd := w.Header()
		hd.Set("Content-Type", "application/octet-stream")
		hd.Set("Content-Length", strconv.FormatInt(size, 10))
		hd.Set("Content-Disposition", `attachment; filename="recsys-backup.db"`)
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		started = true
		if r.Method == http.MethodHead {
			return nil, errHeadOnly // the headers of the copy, without reading it
		}
		return dw, nil
	})
	switch {
	case err == nil || errors.Is(err, errHeadOnly):
		return
	case !started:
		h.writeError(w, r, err)
		return
	}
	h.log.Warn("backup cut off", "request_id", middleware.GetReqID(r.Context()), "bytes", n, "err", err)
	panic(http.ErrAbortHandler) // the connection closes before the Content-Length is reached
}

// deadlineWriter moves the connection's write deadline on as it writes:
// each write may take up to about idle (at least three quarters of it).
type deadlineWriter struct {
	w        io.Writer
	rc       *http.ResponseController
	idle     time.Duration
	deadline time.Time
}

// extend sets the write deadline idle from now, once a quarter of idle has
// passed since it was last set.
func (d *deadlineWriter) extend() error {
	now := time.Now()
	if now.Add(d.idle * 3 / 4).Before(d.deadline) {
		return nil
	}
	d.deadline = now.Add(d.idle)
	return d.rc.SetWriteDeadline(d.deadline)
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if err := d.extend(); err != nil {
		return 0, err
	}
	return d.w.Write(p)
}
