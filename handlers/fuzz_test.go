package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/recsys-engine/recsys/api"
)

// fakeStore records what reaches the services.
type fakeStore struct {
	added   []api.Interaction
	lastGet string
}

func (f *fakeStore) AddInteractions(_ context.Context, evs []api.Interaction) (int, error) {
	f.added = append(f.added, evs...)
	return len(evs), nil
}
func (f *fakeStore) DeleteInteraction(context.Context, string, string) error { return nil }
func (f *fakeStore) History(context.Context, string, api.Page) ([]api.HistoryEntry, string, error) {
	return nil, "", nil
}
func (f *fakeStore) User(_ context.Context, id string) (api.User, error) {
	f.lastGet = id
	return api.User{ID: id}, nil
}
func (f *fakeStore) Users(context.Context, api.Page) ([]api.User, string, error) { return nil, "", nil }
func (f *fakeStore) DeleteUser(context.Context, string) error                    { return nil }

func newFuzzHandler(f *fakeStore) http.Handler {
	return New(Deps{Interactions: f, Users: f})
}

// FuzzDecodeInteractions feeds arbitrary bodies to POST /interactions: the
// answer is 201 or a client error, never a 5xx, and whatever reaches the
// store has valid ids and is exactly what the body held.
func FuzzDecodeInteractions(f *testing.F) {
	for _, s := range []string{
		`{"user_id":"u","item_id":"i"}`,
		`{"user_id":"u","item_id":"i","type":"purchase","value":2.5,"timestamp":"2026-01-02T03:04:05Z"}`,
		`{"interactions":[{"user_id":"u","item_id":"i"},{"user_id":"v","item_id":"j","type":"play"}]}`,
		`{"interactions":[]}`,
		`{"user_id":"","item_id":"i"}`,
		`{"user_id":"a\u0000b","item_id":"i"}`,
		`{"user_id":"u","item_id":"i","extra":1}`,
		`[1,2,3]`, `null`, `{"user_id":`, `{"value":"NaN"}`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fs := &fakeStore{}
		h := newFuzzHandler(fs)
		req := httptest.NewRequest(http.MethodPost, "/interactions", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusCreated:
			if len(fs.added) == 0 {
				t.Fatalf("201 but nothing stored for %q", body)
			}
			for _, ev := range fs.added {
				if api.ValidateID(ev.UserID) != "" || api.ValidateID(ev.ItemID) != "" || ev.Type == "" {
					t.Fatalf("invalid event reached the store: %+v from %q", ev, body)
				}
			}
		case rec.Code >= 400 && rec.Code < 500:
			if len(fs.added) != 0 {
				t.Fatalf("status %d but %d events stored", rec.Code, len(fs.added))
			}
			if !strings.Contains(rec.Body.String(), `"error"`) {
				t.Fatalf("4xx without the error envelope: %s", rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}

// FuzzPathID checks id handling end to end: an id is accepted exactly when
// ValidateID accepts it, and a valid id sent escaped in the path reaches the
// store unchanged.
func FuzzPathID(f *testing.F) {
	for _, s := range []string{"u1", "a/b", "100%", "é", "a b", "?x=1", "#frag", strings.Repeat("x", 256),
		strings.Repeat("x", 257), "tab\there", "\u200b", "..", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !utf8.ValidString(id) || id == "" {
			return // not expressible as an escaped path segment to compare
		}
		fs := &fakeStore{}
		h := newFuzzHandler(fs)
		req := httptest.NewRequest(http.MethodGet, "/users/x", nil)
		req.URL = &url.URL{Path: "/users/" + id, RawPath: "/users/" + url.PathEscape(id)}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		valid := api.ValidateID(id) == ""
		switch {
		case id == "." || id == "..":
			// Path cleaning may redirect these; only no 5xx is required.
			if rec.Code >= 500 {
				t.Fatalf("status %d for %q", rec.Code, id)
			}
		case valid && rec.Code == http.StatusOK:
			if fs.lastGet != id {
				t.Fatalf("store got id %q, want %q", fs.lastGet, id)
			}
		case !valid && rec.Code == http.StatusBadRequest:
		default:
			t.Fatalf("id %q (valid=%v): status %d %s", id, valid, rec.Code, rec.Body)
		}
	})
}
