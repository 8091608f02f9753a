package handlers

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/recsys-engine/recsys/api"
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

// adminDisabledMessage says how to enable the admin routes.
const adminDisabledMessage = "admin routes and item deletes are disabled on this server: it has no admin key; " +
	"restart it with --admin-key KEY (or RECSYS_ADMIN_KEY) to enable them"

// authorize checks the key for a route of the given level.
//
// With no key configured on loopback, everything is open: the local
// development default (browserGuard keeps web pages out of it). Once any
// key is configured or the server listens beyond loopback, the admin routes
// (/admin/*, item deletes) need the admin key, and with none configured
// they are disabled for everyone: an application key must not quietly
// grant them, nor must an exposed --insecure server.
// Data routes, the erasure of a user's data included, need a key only when
// one is configured; with only an admin key, every guarded route needs it.
func (h *handler) authorize(r *http.Request, need level) error {
	adminKey, appKey := h.Keys.Admin, h.Keys.App
	guarded := appKey != "" || adminKey != "" || h.Keys.Exposed
	if need == levelAdmin && adminKey == "" {
		if guarded {
			return &api.Error{Code: api.CodeAdminDisabled, Message: adminDisabledMessage}
		}
		return nil
	}
	if need == levelApp && appKey == "" && adminKey == "" {
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

// requireAdmin guards admin routes and item deletes.
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
