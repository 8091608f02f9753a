package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"

	"recsys/api"
)

// newValidator returns a validator that names fields by their JSON names
// and knows the project's tags.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	must(v.RegisterValidation("recsysid", func(fl validator.FieldLevel) bool {
		return api.ValidateID(fl.Field().String()) == ""
	}))
	must(v.RegisterValidation("finite", func(fl validator.FieldLevel) bool {
		return api.IsFinite(fl.Field().Float())
	}))
	return v
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// decodeJSON reads one JSON value into dst: the right content type, a
// bounded body, no unknown fields, nothing after the value.
func (h *handler) decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return api.Errorf(api.CodeUnsupportedMedia, "Content-Type must be application/json, got %q", ct)
	}
	body := http.MaxBytesReader(w, r.Body, h.limits.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return jsonError(err)
		}
		return api.Errorf(api.CodeInvalid, "the body must hold exactly one JSON value")
	}
	return nil
}

// jsonError turns a decoding failure into a client error naming the field
// where it can.
func jsonError(err error) error {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The connection's read deadline passed mid-body: a client that
		// sends too slowly (see serve --read-timeout).
		return api.Errorf(api.CodeTimeout, "the request body did not arrive within the server's read timeout")
	case errors.As(err, &mbe):
		return api.Errorf(api.CodeTooLarge, "the body is larger than the limit of %d bytes", mbe.Limit)
	case errors.As(err, &syn):
		return api.Errorf(api.CodeInvalid, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		// Fields of an embedded struct carry its Go name as a prefix.
		field := strings.TrimPrefix(typ.Field, "InteractionIn.")
		if field == "" {
			field = "body"
		}
		return api.FieldError(field, fmt.Sprintf("must be %s, not %s", article(typ.Type.Kind()), strings.TrimPrefix(typ.Value, "number ")))
	case errors.Is(err, io.EOF):
		return api.Errorf(api.CodeInvalid, "the body is empty; send a JSON value")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return api.Errorf(api.CodeInvalid, "malformed JSON: the body ends too early")
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return api.FieldError(name, "unknown field")
	}
	if strings.Contains(msg, "parsing time") {
		return api.FieldError("timestamp", "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	return api.Errorf(api.CodeInvalid, "invalid JSON: %s", strings.TrimPrefix(msg, "json: "))
}

func article(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint32, reflect.Uint64:
		return "an integer"
	}
	return "a " + k.String()
}

// validate runs the struct tags and names every failing field.
func (h *handler) validate(v any) error {
	err := h.validator.Struct(v)
	if err == nil {
		return nil
	}
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		return api.Errorf(api.CodeInvalid, "invalid request: %v", err)
	}
	out := &api.Error{Code: api.CodeInvalid}
	for _, fe := range ves {
		field := fe.Namespace()
		if _, rest, ok := strings.Cut(field, "."); ok {
			field = rest
		}
		out.Details = append(out.Details, api.ErrorDetail{Field: field, Problem: problem(fe)})
	}
	out.Message = fmt.Sprintf("%s: %s", out.Details[0].Field, out.Details[0].Problem)
	if len(out.Details) > 1 {
		out.Message += fmt.Sprintf(" (and %d more)", len(out.Details)-1)
	}
	return out
}

func problem(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is required"
	case "recsysid":
		return api.ValidateID(fe.Value().(string))
	case "finite":
		return "must be a finite number"
	case "max", "min":
		bound := map[string]string{"max": "at most", "min": "at least"}[fe.Tag()]
		switch fe.Kind() {
		case reflect.Slice, reflect.Map:
			return "must have " + bound + " " + fe.Param() + " entries"
		case reflect.String:
			return "must be " + bound + " " + fe.Param() + " characters"
		}
		return "must be " + bound + " " + fe.Param()
	case "oneof":
		return "must be one of: " + strings.ReplaceAll(fe.Param(), " ", ", ")
	}
	return "fails the " + fe.Tag() + " rule"
}

// queryInt reads an integer query parameter within [min, max].
func queryInt(r *http.Request, name string, def, min, max int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, api.FieldError(name, fmt.Sprintf("must be an integer, got %q", truncate(s)))
	}
	if n < min || n > max {
		return 0, api.FieldError(name, fmt.Sprintf("must be between %d and %d, got %d", min, max, n))
	}
	return n, nil
}

// queryBool reads a boolean query parameter.
func queryBool(r *http.Request, name string, def bool) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, api.FieldError(name, fmt.Sprintf("must be true or false, got %q", truncate(s)))
	}
	return b, nil
}

// queryString reads a string query parameter of bounded length.
func queryString(r *http.Request, name string, max int) (string, error) {
	s := r.URL.Query().Get(name)
	if len(s) > max {
		return "", api.FieldError(name, fmt.Sprintf("must be at most %d bytes", max))
	}
	return s, nil
}

func truncate(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
