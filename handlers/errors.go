package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/recsys-engine/recsys/api"
)

// statuses maps an error code to its HTTP status; a code it does not name
// (internal) is a 500.
var statuses = map[string]int{
	api.CodeInvalid:            http.StatusBadRequest,
	api.CodeUnauthorized:       http.StatusUnauthorized,
	api.CodeForbidden:          http.StatusForbidden,
	api.CodeAdminDisabled:      http.StatusForbidden,
	api.CodeNotFound:           http.StatusNotFound,
	api.CodeMethodNotAllowed:   http.StatusMethodNotAllowed,
	api.CodeConflict:           http.StatusConflict,
	api.CodeTooLarge:           http.StatusRequestEntityTooLarge,
	api.CodeUnsupportedMedia:   http.StatusUnsupportedMediaType,
	api.CodeRateLimited:        http.StatusTooManyRequests,
	api.CodeUnavailable:        http.StatusServiceUnavailable,
	api.CodeModelNotReady:      http.StatusServiceUnavailable,
	api.CodeTimeout:            http.StatusServiceUnavailable,
	api.CodeStorageUnavailable: http.StatusServiceUnavailable,
	api.CodeStorageFull:        http.StatusInsufficientStorage,
	api.CodeNotImplemented:     http.StatusNotImplemented,
}

// statusOf is the HTTP status of an error code.
func statusOf(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// endpoint answers one API request: the status and the value to encode, or
// the error that becomes the error envelope. A nil value is an answer
// without a body (204).
type endpoint func(w http.ResponseWriter, r *http.Request) (int, any, error)

// serve is the route of an endpoint: every failure goes out through
// writeError, every answer through writeJSON.
func (h *handler) serve(e endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status, v, err := e(w, r)
		switch {
		case err != nil:
			h.writeError(w, r, err)
		case v == nil:
			w.WriteHeader(status)
		default:
			h.writeJSON(w, r, status, v)
		}
	}
}

// writeError writes the docs/design.md#api envelope. Internal errors are logged
// with the request id and answered without their text.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		err = api.Errorf(api.CodeTimeout, "the request took longer than the server's request timeout")
	} else if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		err = api.Errorf(api.CodeTimeout, "the request was cancelled")
	}
	code := api.ErrorCode(err)
	reqID := middleware.GetReqID(r.Context())
	body := api.ErrorOut{Error: api.ErrorBody{Code: code, Message: api.ErrorMessage(err), RequestID: reqID}}
	var e *api.Error
	if errors.As(err, &e) {
		body.Error.Details = e.Details
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
	}
	if code == api.CodeInternal {
		h.log.Error("internal error", "request_id", reqID, "route", routePattern(r), "err", err)
		h.metrics.internalErrors.Inc()
	}
	b, encErr := json.Marshal(body)
	if encErr != nil {
		// The envelope holds only strings, so this cannot happen; were it
		// to, the client still gets a body it can parse.
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	writeBody(w, statusOf(code), b)
}

// writeJSON answers v as JSON with status. The whole body is encoded before
// the status goes out: a value that cannot be encoded (a NaN or infinite
// float) becomes a logged and counted 500 with the error envelope, never a
// 2xx with an empty or cut-off body.
func (h *handler) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.writeError(w, r, fmt.Errorf("encoding the %d response: %w", status, err))
		return
	}
	writeBody(w, status, b)
}

// writeBody sends an encoded JSON body, ending in a newline as
// json.Encoder's output did.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	// The length is known, so a HEAD answers it as the GET does.
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	if _, err := w.Write(append(b, '\n')); err != nil {
		slog.Debug("writing response", "err", err)
	}
}
