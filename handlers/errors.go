package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"

	"recsys/api"
)

// statusOf maps an error code to its HTTP status.
func statusOf(code string) int {
	switch code {
	case api.CodeInvalid:
		return http.StatusBadRequest
	case api.CodeUnauthorized:
		return http.StatusUnauthorized
	case api.CodeForbidden, api.CodeAdminDisabled:
		return http.StatusForbidden
	case api.CodeNotFound:
		return http.StatusNotFound
	case api.CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case api.CodeConflict:
		return http.StatusConflict
	case api.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case api.CodeUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case api.CodeRateLimited:
		return http.StatusTooManyRequests
	case api.CodeUnavailable, api.CodeModelNotReady, api.CodeTimeout:
		return http.StatusServiceUnavailable
	case api.CodeStorageFull:
		return http.StatusInsufficientStorage
	default:
		return http.StatusInternalServerError
	}
}

// writeError writes the SPEC.md §3 envelope. Internal errors are logged
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
	}
	if code == api.CodeInternal {
		h.log.Error("internal error", "request_id", reqID, "route", routePattern(r), "err", err)
		h.metrics.internalErrors.Inc()
	}
	writeJSON(w, statusOf(code), body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	if err := enc.Encode(v); err != nil {
		slog.Debug("writing response", "err", err)
	}
}
