package handlers

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"recsys/api"
)

// level is what a route requires.
type level int

const (
	levelApp level = iota
	levelAdmin
)

// presentedKey reads "Authorization: Bearer KEY" or "X-API-Key: KEY".
func presentedKey(r *http.Request) string {
	if k := r.Header.Get("X-API-Key"); k != "" {
		return k
	}
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// keyEqual compares in constant time (for equal lengths; the length of a
// key is not a secret worth protecting).
func keyEqual(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// authorize checks the key for a route of the given level. With no key
// configured at all, everything is open (the server then listens on
// loopback only, see main); with only an admin key, every guarded route
// needs it.
func (h *handler) authorize(r *http.Request, need level) error {
	adminKey, appKey := h.Keys.Admin, h.Keys.App
	if need == levelApp && appKey == "" && adminKey == "" {
		return nil
	}
	if need == levelAdmin && adminKey == "" {
		return nil
	}
	key := presentedKey(r)
	if key == "" {
		return api.Errorf(api.CodeUnauthorized, "this route needs an API key: send Authorization: Bearer <key>")
	}
	isAdmin := adminKey != "" && keyEqual(key, adminKey)
	isApp := appKey != "" && keyEqual(key, appKey)
	switch {
	case isAdmin, need == levelApp && isApp:
		return nil
	case isApp:
		return api.Errorf(api.CodeForbidden, "this route needs the admin key")
	default:
		return api.Errorf(api.CodeForbidden, "the API key is not valid")
	}
}

// requireApp guards data routes with the application (or admin) key.
func (h *handler) requireApp(next http.Handler) http.Handler { return h.require(levelApp, next) }

// requireAdmin guards admin routes and deletes.
func (h *handler) requireAdmin(next http.Handler) http.Handler { return h.require(levelAdmin, next) }

func (h *handler) require(need level, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.authorize(r, need); err != nil {
			h.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
