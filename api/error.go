// Package api is the contract of recsys: the domain types, the interfaces
// the other packages implement or consume, the one error type, and the JSON
// request and response types with their validation tags. It imports nothing
// of ours, nor net/http, nor bbolt.
//
// Works cited in the comments are listed in docs/references.md.
package api

import (
	"errors"
	"fmt"
)

// Error codes. The HTTP layer maps each to one status.
const (
	CodeInvalid          = "invalid"            // 400
	CodeUnauthorized     = "unauthorized"       // 401
	CodeForbidden        = "forbidden"          // 403
	CodeAdminDisabled    = "admin_disabled"     // 403: no admin key configured
	CodeNotFound         = "not_found"          // 404
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeConflict         = "conflict"           // 409
	CodeTooLarge         = "too_large"          // 413
	CodeUnsupportedMedia = "unsupported_media"  // 415
	CodeRateLimited      = "rate_limited"       // 429
	CodeUnavailable      = "unavailable"        // 503
	CodeModelNotReady    = "model_not_ready"    // 503
	CodeInternal         = "internal"           // 500
	CodeTimeout          = "timeout"            // 503
	CodeStorageFull      = "storage_unwritable" // 507
	// CodeNotImplemented: this server cannot do what was asked (its store
	// has no such operation); the message says what to use instead.
	CodeNotImplemented = "not_implemented" // 501
	// CodeStorageUnavailable: the database server cannot be reached (it
	// is down or restarting); the request changed nothing.
	CodeStorageUnavailable = "storage_unavailable" // 503
)

// Error is the one error type of the application. Message is safe to show to
// a client; an internal error's message never leaves the process.
type Error struct {
	Code    string
	Message string
	Details []ErrorDetail
	// RetryAfter, when positive, is the seconds after which a retry may
	// succeed: the HTTP answer carries it as Retry-After.
	RetryAfter int
}

// ErrorDetail names one problem with one field of a request.
type ErrorDetail struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s (%s: %s)", e.Code, e.Message, e.Details[0].Field, e.Details[0].Problem)
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ModelLoading is the error for a trained model the server's start has
// not loaded yet: model_not_ready, with a retry after a second.
func ModelLoading(name string) *Error {
	return &Error{Code: CodeModelNotReady, RetryAfter: 1,
		Message: fmt.Sprintf("model %q is still loading: the server has just started and loads its other models after the active one; retry in a moment", name)}
}

// FieldError returns an invalid-input error naming one field.
func FieldError(field, problem string) *Error {
	return &Error{Code: CodeInvalid, Message: fmt.Sprintf("%s: %s", field, problem),
		Details: []ErrorDetail{{Field: field, Problem: problem}}}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, and
// CodeInternal otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return CodeInternal
}

// ErrorMessage returns the client-safe message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
