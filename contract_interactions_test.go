package main

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

func testContractInteractions(t *testing.T) {
	s := startContractServer(t, nil)
	for _, ex := range []contractCase{
		{name: "put item", method: "PUT", path: "/items/item-1", body: `{"categories":["comedy"]}`, want: 200},
		{name: "one event", method: "POST", path: "/interactions", want: 201,
			body: `{"user_id":"user-1","item_id":"item-1","type":"purchase","timestamp":"2026-01-02T15:04:05Z"}`},
		{name: "one bare event", method: "POST", path: "/interactions", body: `{"user_id":"user-3","item_id":"item-9"}`, want: 201},
		{name: "batch", method: "POST", path: "/interactions", want: 201, body: `{"interactions":[
			{"user_id":"user-1","item_id":"item-3","type":"play","value":3},
			{"user_id":"user-2","item_id":"item-1"},
			{"user_id":"user-2","item_id":"item-7","type":"rating","value":2,"timestamp":"2026-01-02T17:04:05+02:00"},
			{"user_id":"user-1","item_id":"item-4","type":"dislike"},
			{"user_id":"user-1","item_id":"item-5","type":""}]}`},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}

	var before api.Counts
	s.do(t, contractCase{method: "GET", path: "/stats", want: 200}).decode(t, &before)
	ev := func(fields string) string { return `{"user_id":"u","item_id":"i"` + fields + `}` }
	long := strings.Repeat("x", 257)
	for _, ex := range []contractCase{
		{name: "malformed", method: "POST", path: "/interactions", body: `{"user_id":`, want: 400, invalid: true},
		{name: "syntax error", method: "POST", path: "/interactions", body: `{"user_id" "u"}`, want: 400, invalid: true},
		{name: "empty body", method: "POST", path: "/interactions", ctype: "application/json", want: 400, invalid: true},
		{name: "null body", method: "POST", path: "/interactions", body: `null`, want: 400, invalid: true},
		{name: "array body", method: "POST", path: "/interactions", body: `[]`, want: 400, invalid: true},
		{name: "unknown field", method: "POST", path: "/interactions", body: ev(`,"colour":1`), want: 400, invalid: true, field: "colour"},
		{name: "user_id not a string", method: "POST", path: "/interactions", body: `{"user_id":5,"item_id":"i"}`, want: 400, invalid: true, field: "user_id"},
		{name: "missing item_id", method: "POST", path: "/interactions", body: `{"user_id":"u"}`, want: 400, invalid: true, field: "item_id"},
		{name: "empty user_id", method: "POST", path: "/interactions", body: `{"user_id":"","item_id":"i"}`, want: 400, invalid: true, field: "user_id"},
		{name: "long user_id", method: "POST", path: "/interactions", body: `{"user_id":"` + long + `","item_id":"i"}`, want: 400, invalid: true, field: "user_id"},
		{name: "control in item_id", method: "POST", path: "/interactions", body: `{"user_id":"u","item_id":"a\u0001b"}`, want: 400, invalid: true, field: "item_id"},
		{name: "long type", method: "POST", path: "/interactions", body: ev(`,"type":"` + strings.Repeat("t", 65) + `"`), want: 400, invalid: true, field: "type"},
		// The accepted types are the server's configuration (--event-types),
		// so the schema cannot list them.
		{name: "unknown type", method: "POST", path: "/interactions", body: ev(`,"type":"teleport"`), want: 400, field: "type"},
		{name: "value not a number", method: "POST", path: "/interactions", body: ev(`,"value":"3"`), want: 400, invalid: true, field: "value"},
		{name: "bad timestamp", method: "POST", path: "/interactions", body: ev(`,"timestamp":"yesterday"`), want: 400, invalid: true, field: "timestamp"},
		{name: "both shapes", method: "POST", path: "/interactions", body: ev(`,"interactions":[{"user_id":"u","item_id":"i"}]`), want: 400, invalid: true},
		{name: "empty batch", method: "POST", path: "/interactions", body: `{"interactions":[]}`, want: 400, invalid: true, field: "interactions"},
		{name: "batch bad entry", method: "POST", path: "/interactions", want: 400, invalid: true, field: "interactions[1].user_id",
			body: `{"interactions":[{"user_id":"u","item_id":"i"},{"user_id":"","item_id":"i"}]}`},
		{name: "batch unknown type", method: "POST", path: "/interactions", want: 400, field: "interactions[1].type",
			body: `{"interactions":[{"user_id":"u","item_id":"i"},{"user_id":"u","item_id":"j","type":"teleport"}]}`},
		{name: "batch too big", method: "POST", path: "/interactions", want: 400, invalid: true, field: "interactions",
			body: `{"interactions":[` + strings.Repeat(`{"user_id":"u","item_id":"i"},`, api.MaxBatch) + `{"user_id":"u","item_id":"i"}]}`},
		// kin-openapi reads one JSON value and ignores the rest; the server
		// refuses a body of two values.
		{name: "two values", method: "POST", path: "/interactions", body: ev(``) + ev(``), want: 400},
		// The server has no keys: a text or form body, or one without a
		// type, is refused as a web page's request (TestBrowserGuard).
		{name: "text/plain", method: "POST", path: "/interactions", body: ev(``), ctype: "text/plain", want: 403, invalid: true},
		{name: "xml", method: "POST", path: "/interactions", body: ev(``), ctype: "application/xml", want: 415, invalid: true},
		{name: "no content type", method: "POST", path: "/interactions", body: ev(``), ctype: "-", want: 403, invalid: true},
		{name: "json with charset", method: "POST", path: "/interactions", body: `{"user_id":"u"}`, ctype: "application/json; charset=utf-8", want: 400, invalid: true, field: "item_id"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
	t.Run("bad requests change nothing", func(t *testing.T) {
		var after api.Counts
		s.do(t, contractCase{method: "GET", path: "/stats", want: 200}).decode(t, &after)
		if after != before {
			t.Errorf("counts after refused requests = %+v, want %+v", after, before)
		}
	})

	for _, ex := range []contractCase{
		{name: "user", method: "GET", path: "/users/user-1", want: 200},
		{name: "user unknown", method: "GET", path: "/users/nobody", want: 404},
		{name: "user control id", method: "GET", path: "/users/%01", want: 400, invalid: true, field: "id"},
		{name: "user long id", method: "GET", path: "/users/" + long, want: 400, invalid: true, field: "id"},
		{name: "users", method: "GET", path: "/users", want: 200},
		{name: "users limit", method: "GET", path: "/users?limit=1", want: 200},
		{name: "users limit 0", method: "GET", path: "/users?limit=0", want: 400, invalid: true, field: "limit"},
		{name: "users limit twice", method: "GET", path: "/users?limit=1&limit=2", want: 400, field: "limit"},
		{name: "users forged cursor", method: "GET", path: "/users?cursor=%21%21", want: 400, field: "cursor"},
		{name: "users long cursor", method: "GET", path: "/users?cursor=" + strings.Repeat("A", 1025), want: 400, invalid: true, field: "cursor"},

		{name: "history", method: "GET", path: "/users/user-1/interactions", want: 200},
		{name: "history limit", method: "GET", path: "/users/user-1/interactions?limit=1", want: 200},
		{name: "history unknown user", method: "GET", path: "/users/nobody/interactions", want: 404},
		{name: "history limit 0", method: "GET", path: "/users/user-1/interactions?limit=0", want: 400, invalid: true, field: "limit"},
		{name: "history limit word", method: "GET", path: "/users/user-1/interactions?limit=x", want: 400, invalid: true, field: "limit"},
		{name: "history forged cursor", method: "GET", path: "/users/user-1/interactions?cursor=AAAA", want: 400, field: "cursor"},
		{name: "history long cursor", method: "GET", path: "/users/user-1/interactions?cursor=" + strings.Repeat("A", 65), want: 400, invalid: true, field: "cursor"},
		{name: "history control id", method: "GET", path: "/users/%1F/interactions", want: 400, invalid: true, field: "id"},

		{name: "recommendations", method: "GET", path: "/users/user-1/recommendations", want: 200},
		{name: "recommendations all params", method: "GET", path: "/users/user-1/recommendations?n=2&exclude_consumed=false&category=comedy&model=popular", want: 200},
		{name: "recommendations unknown user", method: "GET", path: "/users/nobody/recommendations?n=1000", want: 200},
		{name: "recommendations n 0", method: "GET", path: "/users/user-1/recommendations?n=0", want: 400, invalid: true, field: "n"},
		{name: "recommendations n 1001", method: "GET", path: "/users/user-1/recommendations?n=1001", want: 400, invalid: true, field: "n"},
		{name: "recommendations n word", method: "GET", path: "/users/user-1/recommendations?n=ten", want: 400, invalid: true, field: "n"},
		{name: "recommendations exclude_consumed word", method: "GET", path: "/users/user-1/recommendations?exclude_consumed=maybe", want: 400, invalid: true, field: "exclude_consumed"},
		{name: "recommendations long model", method: "GET", path: "/users/user-1/recommendations?model=" + strings.Repeat("m", 65), want: 400, invalid: true, field: "model"},
		{name: "recommendations long category", method: "GET", path: "/users/user-1/recommendations?category=" + strings.Repeat("c", 257), want: 400, invalid: true, field: "category"},
		{name: "recommendations control id", method: "GET", path: "/users/%7F/recommendations", want: 400, invalid: true, field: "id"},
		{name: "recommendations untrained model", method: "GET", path: "/users/user-1/recommendations?model=itemknn", want: 503},
		// Model names are the server's registry; the schema cannot list them.
		{name: "recommendations unknown model", method: "GET", path: "/users/user-1/recommendations?model=no-such-model", want: 400, field: "model"},

		{name: "similar untrained", method: "GET", path: "/items/item-1/similar", want: 503},
		{name: "similar by content", method: "GET", path: "/items/item-1/similar?by=content&n=5", want: 503},
		{name: "similar unknown item", method: "GET", path: "/items/nope/similar", want: 404},
		{name: "similar bad by", method: "GET", path: "/items/item-1/similar?by=magic", want: 400, invalid: true, field: "by"},
		{name: "similar n 0", method: "GET", path: "/items/item-1/similar?n=0", want: 400, invalid: true, field: "n"},
		{name: "similar control id", method: "GET", path: "/items/%01/similar", want: 400, invalid: true, field: "id"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}

	t.Run("recommendations content", func(t *testing.T) {
		var rec api.RecommendationsOut
		s.do(t, contractCase{method: "GET", path: "/users/nobody/recommendations", want: 200}).decode(t, &rec)
		if rec.Fallback != "popular" || rec.UserID != "nobody" || len(rec.Items) == 0 {
			t.Errorf("unknown user got %+v, want popular fallback items", rec)
		}
		var popular api.RecommendationsOut
		s.do(t, contractCase{method: "GET", path: "/users/user-1/recommendations?model=popular", want: 200}).decode(t, &popular)
		if popular.Fallback != "" {
			t.Errorf("model=popular answered fallback %q, want none", popular.Fallback)
		}
	})

	t.Run("history pages", func(t *testing.T) {
		got := pagedIDs(t, s, "/users/user-1/interactions?limit=2", func(page api.HistoryOut) ([]string, string) {
			var ids []string
			for _, e := range page.Interactions {
				ids = append(ids, e.ItemID)
			}
			return ids, page.NextCursor
		})
		sort.Strings(got)
		if want := []string{"item-1", "item-3", "item-4", "item-5"}; !slices.Equal(got, want) {
			t.Errorf("history items = %q, want %q", got, want)
		}
	})

	t.Run("users pages", func(t *testing.T) {
		// user-1 posted four events (one, then three in the batch), user-2
		// two, user-3 one.
		var events []int64
		got := pagedIDs(t, s, "/users?limit=2", func(page api.UsersOut) ([]string, string) {
			var ids []string
			for _, u := range page.Users {
				ids = append(ids, u.ID)
				events = append(events, u.Events)
			}
			return ids, page.NextCursor
		})
		if want := []string{"user-1", "user-2", "user-3"}; !slices.Equal(got, want) {
			t.Errorf("users = %q, want %q", got, want)
		}
		if want := []int64{4, 2, 1}; !slices.Equal(events, want) {
			t.Errorf("events = %v, want %v", events, want)
		}
	})

	for _, ex := range []contractCase{
		{name: "forget pair", method: "DELETE", path: "/users/user-1/interactions/item-1", want: 204},
		{name: "forget pair again", method: "DELETE", path: "/users/user-1/interactions/item-1", want: 404},
		{name: "forget pair unknown item", method: "DELETE", path: "/users/user-1/interactions/never", want: 404},
		{name: "forget pair unknown user", method: "DELETE", path: "/users/nobody/interactions/item-1", want: 404},
		{name: "forget pair control user", method: "DELETE", path: "/users/%01/interactions/item-1", want: 400, invalid: true, field: "id"},
		{name: "forget pair control item", method: "DELETE", path: "/users/user-1/interactions/%01", want: 400, invalid: true, field: "item_id"},

		{name: "delete item", method: "DELETE", path: "/items/item-3", want: 204},
		{name: "delete item again", method: "DELETE", path: "/items/item-3", want: 404},
		{name: "delete item control id", method: "DELETE", path: "/items/%01", want: 400, invalid: true, field: "id"},

		{name: "delete user", method: "DELETE", path: "/users/user-2", want: 204},
		{name: "delete user again", method: "DELETE", path: "/users/user-2", want: 404},
		{name: "deleted user is gone", method: "GET", path: "/users/user-2", want: 404},
		{name: "delete user long id", method: "DELETE", path: "/users/" + long, want: 400, invalid: true, field: "id"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}
}
