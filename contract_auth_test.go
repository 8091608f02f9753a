package main

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/recsys-engine/recsys/api"
)

// testContractAuth sends every operation of the contract to a server with
// keys: without a key, with a wrong one, with the application key and with
// the admin key; the answers must follow each operation's security and
// x-recsys-key.
func testContractAuth(t *testing.T) {
	c := loadContract(t)
	const appKey, adminKey = testAppKey, testAdminKey
	s := startContractServer(t, func(cfg *Config) { cfg.AppKey, cfg.AdminKey = appKey, adminKey })
	s.auth = ""
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		ex := exampleExchange(t, c, method, path, op)
		level, _ := op.Extensions["x-recsys-key"].(string)
		guarded := len(c.doc.Security) > 0
		if op.Security != nil {
			guarded = len(*op.Security) > 0
		}
		switch {
		case guarded && level != "app" && level != "admin":
			t.Fatalf("%s %s is guarded but x-recsys-key is %q, want app or admin", method, path, level)
		case !guarded && level != "":
			t.Fatalf("%s %s has x-recsys-key %q but no security", method, path, level)
		}
		notAuthError := func(t *testing.T, ex contractCase) {
			t.Helper()
			if a := s.do(t, ex); a.status == 401 || a.status == 403 {
				t.Errorf("%s %s: %d, want the route's own answer", method, path, a.status)
			}
		}
		if !guarded {
			ex.noAuth = true
			notAuthError(t, ex)
			return
		}
		none := ex
		none.noAuth, none.want, none.invalid = true, 401, true
		s.do(t, none)

		wrong := ex
		wrong.header, wrong.want = map[string]string{"X-API-Key": "not-a-key"}, 403
		s.do(t, wrong)

		app := ex
		app.header = map[string]string{"Authorization": "Bearer " + appKey}
		if level == "admin" {
			app.want = 403
			s.do(t, app)
		} else {
			notAuthError(t, app)
		}

		admin := ex
		admin.header = map[string]string{"X-API-Key": adminKey}
		notAuthError(t, admin)
	})
}

// testContractAdminDisabled sends every admin operation of the contract to
// a server with an application key and no admin key: each answers 403
// admin_disabled, with no key and with the application key, as its
// documented 403 response says; the app operations still take the key.
func testContractAdminDisabled(t *testing.T) {
	c := loadContract(t)
	const appKey = testAppKey
	s := startContractServer(t, func(cfg *Config) { cfg.AppKey = appKey })
	s.auth = ""
	admin := 0
	forEachOperation(t, c, func(t *testing.T, method, path string, op *openapi3.Operation) {
		ex := exampleExchange(t, c, method, path, op)
		ex.header = map[string]string{"Authorization": "Bearer " + appKey}
		if level, _ := op.Extensions["x-recsys-key"].(string); level != "admin" {
			if a := s.do(t, ex); a.status == 401 || a.status == 403 {
				t.Errorf("%s %s with the app key: %d, want the route's own answer", method, path, a.status)
			}
			return
		}
		admin++
		none := ex
		none.header, none.noAuth, none.invalid = nil, true, true
		for _, ex := range []contractCase{ex, none} {
			ex.want = 403
			var out api.ErrorOut
			s.do(t, ex).decode(t, &out)
			if out.Error.Code != api.CodeAdminDisabled {
				t.Errorf("%s %s (no key: %v): code %q, want %q", method, path, ex.noAuth, out.Error.Code, api.CodeAdminDisabled)
			}
		}
	})
	if admin < 9 {
		t.Fatalf("only %d admin operations in the contract", admin)
	}
}
