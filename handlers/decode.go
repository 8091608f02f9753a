package handlers

import (
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/go-playground/validator/v10"

	"github.com/recsys-engine/recsys/api"
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

// bodySpec says how a request body is read.
type bodySpec struct {
	types []string     // the media types it may be sent as
	names reflect.Type // the type that names fields in errors; nil: the destination's
}

var (
	jsonBody = bodySpec{types: []string{"application/json"}}
	// itemPatchBody is a merge patch of an item, decoded generically but
	// shaped like api.ItemIn.
	itemPatchBody = bodySpec{types: []string{"application/merge-patch+json", "application/json"},
		names: reflect.TypeFor[api.ItemIn]()}
)

// strictJSON are the rules every request body is read with, beyond RFC 8259
// syntax: member names match the documented ones exactly (USER_ID is not
// user_id) and an unknown one is an error; a string with invalid UTF-8 or an
// unpaired surrogate escape is an error instead of becoming U+FFFD, so two
// distinct ids cannot merge; a repeated name is an error instead of the
// last one winning.
var strictJSON = json.JoinOptions(
	json.MatchCaseInsensitiveNames(false),
	json.RejectUnknownMembers(true),
	jsontext.AllowInvalidUTF8(false),
	jsontext.AllowDuplicateNames(false),
)

// decodeJSON reads one JSON value into dst: Content-Type application/json,
// a bounded body, the strictJSON rules, nothing after the value.
func (h *handler) decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	return h.decodeBody(w, r, dst, jsonBody)
}

// decodeBody is decodeJSON for a body read as spec says.
func (h *handler) decodeBody(w http.ResponseWriter, r *http.Request, dst any, spec bodySpec) error {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || !slices.Contains(spec.types, mt) {
		return api.Errorf(api.CodeUnsupportedMedia, "Content-Type must be %s, got %q", strings.Join(spec.types, " or "), ct)
	}
	names := spec.names
	if names == nil {
		names = reflect.TypeOf(dst)
	}
	body, err := h.decodedBody(w, r)
	if err != nil {
		return err
	}
	dec := jsontext.NewDecoder(body, strictJSON)
	if err := json.UnmarshalDecode(dec, dst); err != nil {
		return jsonError(err, names)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		var gz gzipError
		if errors.As(err, &mbe) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &gz) {
			return jsonError(err, nil)
		}
		return api.Errorf(api.CodeInvalid, "the body must hold exactly one JSON value")
	}
	return nil
}

// decodedBody is the request body with its Content-Encoding undone: gzip
// is decoded, identity (or none) is the body itself, and any other coding
// is 415 naming it. The body limit applies to the bytes on the wire and to
// the decoded bytes, so a small gzip stream that inflates past the limit
// is 413 when the limit is reached, without inflating the rest.
func (h *handler) decodedBody(w http.ResponseWriter, r *http.Request) (io.Reader, error) {
	var codings []string
	for _, v := range r.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	raw := http.MaxBytesReader(w, r.Body, h.limits.MaxBodyBytes)
	switch {
	case len(codings) == 0:
		return raw, nil
	case len(codings) == 1 && (codings[0] == "gzip" || codings[0] == "x-gzip"):
	default:
		return nil, api.Errorf(api.CodeUnsupportedMedia, "Content-Encoding %q is not supported; send the body as it is or with gzip",
			strings.Join(codings, ", "))
	}
	zr, err := gzip.NewReader(raw)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, jsonError(err, nil)
		}
		return nil, jsonError(gzipError{err}, nil)
	}
	return http.MaxBytesReader(w, gunzipReader{zr}, h.limits.MaxBodyBytes), nil
}

// gunzipReader marks the errors of a gzip stream as such, so that a
// corrupt or cut stream is not reported as malformed JSON.
type gunzipReader struct{ zr *gzip.Reader }

func (g gunzipReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF {
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) && !errors.Is(err, os.ErrDeadlineExceeded) {
			err = gzipError{err}
		}
	}
	return n, err
}

func (g gunzipReader) Close() error { return g.zr.Close() }

// gzipError is a body sent with Content-Encoding gzip that does not decode.
type gzipError struct{ err error }

func (e gzipError) Error() string { return e.err.Error() }
func (e gzipError) Unwrap() error { return e.err }

// jsonError turns a decoding failure into a client error naming the field
// where it can; t is the type decoded into, to name fields by (see
// fieldPath).
func jsonError(err error, t reflect.Type) error {
	var (
		syn *jsontext.SyntacticError
		sem *json.SemanticError
		ae  *api.Error
		mbe *http.MaxBytesError
		gz  gzipError
	)
	switch {
	case errors.As(err, &gz):
		msg := gz.err.Error()
		if errors.Is(gz.err, io.ErrUnexpectedEOF) {
			msg = "the stream ends too early"
		}
		return api.Errorf(api.CodeInvalid, "the body is sent with Content-Encoding gzip but does not decode: %s", msg)
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The connection's read deadline passed mid-body: a client that
		// sends too slowly (see serve --read-timeout).
		return api.Errorf(api.CodeTimeout, "the request body did not arrive within the server's read timeout")
	case errors.As(err, &mbe):
		return api.Errorf(api.CodeTooLarge, "the body is larger than the limit of %d bytes", mbe.Limit)
	case err == io.EOF:
		return api.Errorf(api.CodeInvalid, "the body is empty; send a JSON value")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return api.Errorf(api.CodeInvalid, "malformed JSON: the body ends too early")
	case errors.As(err, &syn):
		field := fieldPath(t, syn.JSONPointer)
		switch msg := syn.Err.Error(); {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			return api.FieldError(field, "appears more than once")
		case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "surrogate"):
			// In a member name the pointer names the object holding it.
			return api.FieldError(cmp.Or(field, "body"), "must be valid UTF-8: no invalid bytes and no unpaired surrogate escape such as \\ud800")
		}
		return api.Errorf(api.CodeInvalid, "malformed JSON at byte %d: %v", syn.ByteOffset, syn.Err)
	case errors.As(err, &sem):
		field := cmp.Or(fieldPath(t, sem.JSONPointer), "body")
		switch {
		case errors.As(sem.Err, &ae):
			// A type's own decoder (api.Features) knows the problem but
			// not where the value sits: name it by its place.
			if len(ae.Details) == 1 {
				return api.FieldError(field, ae.Details[0].Problem)
			}
			return ae
		case errors.Is(sem.Err, json.ErrUnknownName):
			return api.FieldError(field, "unknown field")
		case sem.GoType == reflect.TypeFor[time.Time]():
			return api.FieldError(field, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
		case sem.JSONKind == '0' && sem.GoType != nil && (sem.GoType.Kind() == reflect.Float64 || sem.GoType.Kind() == reflect.Interface):
			return api.FieldError(field, fmt.Sprintf("must be a number within the range of a 64-bit float, not %s", jsonKind(sem)))
		case sem.GoType != nil:
			return api.FieldError(field, fmt.Sprintf("must be %s, not %s", article(sem.GoType.Kind()), jsonKind(sem)))
		}
	}
	return api.Errorf(api.CodeInvalid, "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind describes the value a semantic error met: the number itself, or
// the kind of anything else.
func jsonKind(sem *json.SemanticError) string {
	switch sem.JSONKind {
	case '0':
		if len(sem.JSONValue) > 0 && len(sem.JSONValue) <= 32 {
			return string(sem.JSONValue)
		}
		return "a number"
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "that value"
}

// fieldPath names the member at ptr as the validator names fields: struct
// members joined by ".", array indices and map keys in brackets
// (interactions[0].user_id, labels[title]). t is the type the body was
// decoded into; where it says nothing (an unknown member), numeric tokens
// are taken as indices.
func fieldPath(t reflect.Type, ptr jsontext.Pointer) string {
	var b strings.Builder
	for tok := range ptr.Tokens() {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		kind := reflect.Invalid
		if t != nil {
			kind = t.Kind()
		}
		switch {
		case kind == reflect.Slice || kind == reflect.Array || kind == reflect.Map:
			b.WriteString("[" + tok + "]")
			t = t.Elem()
		case kind == reflect.Invalid && tok != "" && strings.Trim(tok, "0123456789") == "":
			b.WriteString("[" + tok + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			t = memberType(t, tok)
		}
	}
	return b.String()
}

// memberType is the type of the struct member named name in JSON, looking
// through embedded structs; nil when there is none.
func memberType(t reflect.Type, name string) reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == name:
			return f.Type
		case f.Anonymous && tag == "":
			if ft := memberType(f.Type, name); ft != nil {
				return ft
			}
		}
	}
	return nil
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

// queryValue reads a single-valued query parameter: "" when it is absent,
// and an error naming it when it is given more than once, since which of
// two values was meant cannot be known. Every single-valued parameter is
// read through here; repeatable ones (category, exclude) are read as lists.
// A query string that does not parse (an invalid %-escape) is an error
// rather than the parameters before it.
func queryValue(r *http.Request, name string) (string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", api.Errorf(api.CodeInvalid, "the query string is malformed: %v", err)
	}
	vs := q[name]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", api.FieldError(name, fmt.Sprintf("is given %d times; give it once", len(vs)))
}

// queryInt reads an integer query parameter within [min, max].
func queryInt(r *http.Request, name string, def, min, max int) (int, error) {
	s, err := queryValue(r, name)
	if err != nil || s == "" {
		return def, err
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
	s, err := queryValue(r, name)
	if err != nil || s == "" {
		return def, err
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, api.FieldError(name, fmt.Sprintf("must be true or false, got %q", truncate(s)))
	}
	return b, nil
}

// queryString reads a string query parameter of bounded length.
func queryString(r *http.Request, name string, max int) (string, error) {
	s, err := queryValue(r, name)
	if err != nil {
		return "", err
	}
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

// decodeValid reads the body into dst with decode and validates it.
func (h *handler) decodeValid(w http.ResponseWriter, r *http.Request, dst any, decode func(http.ResponseWriter, *http.Request, any) error) error {
	if err := decode(w, r, dst); err != nil {
		return err
	}
	return h.validate(dst)
}

// nonNil is s, or an empty slice for nil: lists are encoded as [], never
// null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// queryPage reads the page a list request asks for: limit (1-1000, default
// 100) and cursor (at most maxCursor bytes).
func queryPage(r *http.Request, maxCursor int) (api.Page, error) {
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		return api.Page{}, err
	}
	cursor, err := queryString(r, "cursor", maxCursor)
	return api.Page{Cursor: cursor, Limit: limit}, err
}

// deleteByID is the endpoint of a DELETE: 204 once del has removed what
// the id in the path names.
func deleteByID(del func(ctx context.Context, id string) error) endpoint {
	return func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
		id, err := pathID(r, "id")
		if err == nil {
			err = del(r.Context(), id)
		}
		return http.StatusNoContent, nil, err
	}
}

// itemLines is the checker of DecodeItem: one validator for the process.
var itemLines = &handler{validator: newValidator()}

// DecodeItem reads one item as POST /items takes it (an element of its
// "items" array) under the same rules, for `recsys import --items`.
func DecodeItem(line []byte) (api.Item, error) {
	var in api.ItemIn
	if err := json.Unmarshal(line, &in, strictJSON); err != nil {
		return api.Item{}, jsonError(err, reflect.TypeOf(in))
	}
	if in.ID == "" {
		return api.Item{}, api.FieldError("id", "is required")
	}
	if err := itemLines.validate(in); err != nil {
		return api.Item{}, err
	}
	return in.ToItem(), nil
}
