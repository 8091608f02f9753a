package main

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

func testContractItems(t *testing.T) {
	s := startContractServer(t, nil)
	long := strings.Repeat("x", 257)
	many := func(n int, f func(int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	for _, ex := range []contractCase{
		{name: "not ready before training", method: "GET", path: "/readyz", want: 503},
		{name: "put array features", method: "PUT", path: "/items/item-1", want: 200,
			body: `{"features":[1,2.5,-3],"categories":["comedy"],"labels":{"title":"One"}}`},
		{name: "put object features, matching id", method: "PUT", path: "/items/item-2", want: 200,
			body: `{"id":"item-2","features":{"year":1994},"hidden":true}`},
		{name: "put empty item", method: "PUT", path: "/items/item-0", body: `{}`, want: 200},
		{name: "put id with a slash", method: "PUT", path: "/items/a%2Fb", body: `{"categories":["drama"]}`, want: 200},
		{name: "put replaces", method: "PUT", path: "/items/item-0", body: `{"labels":{"k":"v"}}`, want: 200},
		{name: "post batch", method: "POST", path: "/items", want: 201,
			body: `{"items":[{"id":"item-3","categories":["drama"]},{"id":"item-4","features":[]},{"id":"item-5","hidden":false}]}`},
		{name: "get", method: "GET", path: "/items/item-1", want: 200},
		{name: "get id with a slash", method: "GET", path: "/items/a%2Fb", want: 200},
		{name: "list", method: "GET", path: "/items", want: 200},

		{name: "get unknown", method: "GET", path: "/items/nope", want: 404},
		{name: "get long id", method: "GET", path: "/items/" + long, want: 400, invalid: true, field: "id"},
		{name: "get control id", method: "GET", path: "/items/a%01", want: 400, invalid: true, field: "id"},

		{name: "put id mismatch", method: "PUT", path: "/items/item-1", body: `{"id":"other"}`, want: 400, field: "id"},
		{name: "put unknown field", method: "PUT", path: "/items/item-1", body: `{"colour":"red"}`, want: 400, invalid: true, field: "colour"},
		{name: "put malformed", method: "PUT", path: "/items/item-1", body: `{"features":[1,2`, want: 400, invalid: true},
		{name: "put features not numbers", method: "PUT", path: "/items/item-1", body: `{"features":"big"}`, want: 400, invalid: true},
		{name: "put features too long", method: "PUT", path: "/items/item-1", want: 400, invalid: true,
			body: `{"features":[` + many(4097, func(int) string { return "0" }) + `]}`},
		// OpenAPI 3.0 has no propertyNames: the empty feature name is
		// refused by the server but cannot be refused by the schema.
		{name: "put empty feature name", method: "PUT", path: "/items/item-1", body: `{"features":{"":1}}`, want: 400},
		{name: "put hidden not boolean", method: "PUT", path: "/items/item-1", body: `{"hidden":"yes"}`, want: 400, invalid: true, field: "hidden"},
		{name: "put too many categories", method: "PUT", path: "/items/item-1", want: 400, invalid: true, field: "categories",
			body: `{"categories":[` + many(101, func(i int) string { return fmt.Sprintf("%q", fmt.Sprint("c", i)) }) + `]}`},
		{name: "put empty category", method: "PUT", path: "/items/item-1", body: `{"categories":[""]}`, want: 400, invalid: true, field: "categories[0]"},
		{name: "put long label", method: "PUT", path: "/items/item-1", want: 400, invalid: true, field: "labels[title]",
			body: `{"labels":{"title":"` + strings.Repeat("y", 4097) + `"}}`},
		{name: "put empty body", method: "PUT", path: "/items/item-1", ctype: "application/json", want: 400, invalid: true},
		{name: "put two values", method: "PUT", path: "/items/item-1", body: `{} {}`, want: 400},
		{name: "put text/plain", method: "PUT", path: "/items/item-1", body: `{}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "put xml", method: "PUT", path: "/items/item-1", body: `{}`, ctype: "application/xml", want: 415, invalid: true},
		{name: "put no content type", method: "PUT", path: "/items/item-1", body: `{}`, ctype: "-", want: 403, invalid: true},
		{name: "put long id", method: "PUT", path: "/items/" + long, body: `{}`, want: 400, invalid: true, field: "id"},
		{name: "put control id", method: "PUT", path: "/items/%07", body: `{}`, want: 400, invalid: true, field: "id"},

		{name: "post no items", method: "POST", path: "/items", body: `{}`, want: 400, invalid: true, field: "items"},
		{name: "post empty items", method: "POST", path: "/items", body: `{"items":[]}`, want: 400, invalid: true, field: "items"},
		{name: "post item without id", method: "POST", path: "/items", body: `{"items":[{"features":[1]}]}`, want: 400, invalid: true, field: "items[0].id"},
		{name: "post duplicate ids", method: "POST", path: "/items", body: `{"items":[{"id":"d"},{"id":"d"}]}`, want: 400, field: "items[1].id"},
		{name: "post too many", method: "POST", path: "/items", want: 400, invalid: true, field: "items",
			body: `{"items":[` + many(api.MaxBatch+1, func(i int) string { return fmt.Sprintf(`{"id":"i%d"}`, i) }) + `]}`},
		{name: "post unknown field in item", method: "POST", path: "/items", body: `{"items":[{"id":"z","colour":1}]}`, want: 400, invalid: true, field: "items[0].colour"},
		{name: "post array body", method: "POST", path: "/items", body: `[]`, want: 400, invalid: true},
		{name: "post text/plain", method: "POST", path: "/items", body: `{"items":[{"id":"t"}]}`, ctype: "text/plain", want: 403, invalid: true},
		{name: "post xml", method: "POST", path: "/items", body: `{"items":[{"id":"t"}]}`, ctype: "application/xml", want: 415, invalid: true},

		{name: "patch hides, merge-patch type", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", want: 200,
			body: `{"hidden":true,"labels":{"title":null,"year":"1999"}}`},
		{name: "patch as application/json", method: "PATCH", path: "/items/item-1", want: 200,
			body: `{"features":{"0":null,"extra":2},"categories":null,"hidden":null}`},
		{name: "patch vector and matching id", method: "PATCH", path: "/items/item-2", ctype: "application/merge-patch+json", want: 200,
			body: `{"id":"item-2","features":[1,2]}`},
		{name: "patch empty", method: "PATCH", path: "/items/item-2", ctype: "application/merge-patch+json", body: `{}`, want: 200},
		{name: "patch unknown item", method: "PATCH", path: "/items/nope", ctype: "application/merge-patch+json", body: `{"hidden":true}`, want: 404},
		{name: "patch unknown field", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"colour":"red"}`, want: 400, invalid: true, field: "colour"},
		{name: "patch not an object", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `[]`, want: 400, invalid: true},
		{name: "patch id mismatch", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"id":"other"}`, want: 400, field: "id"},
		{name: "patch label not a string", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"labels":{"t":1}}`, want: 400, invalid: true, field: "labels[t]"},
		{name: "patch empty category", method: "PATCH", path: "/items/item-1", ctype: "application/merge-patch+json", body: `{"categories":[""]}`, want: 400, invalid: true, field: "categories[0]"},
		{name: "patch text/plain", method: "PATCH", path: "/items/item-1", ctype: "text/plain", body: `{}`, want: 403, invalid: true},
		{name: "patch xml", method: "PATCH", path: "/items/item-1", ctype: "application/xml", body: `{}`, want: 415, invalid: true},
		{name: "patch json-patch", method: "PATCH", path: "/items/item-1", ctype: "application/json-patch+json", body: `[]`, want: 415, invalid: true},

		{name: "list limit 0", method: "GET", path: "/items?limit=0", want: 400, invalid: true, field: "limit"},
		{name: "list limit 1001", method: "GET", path: "/items?limit=1001", want: 400, invalid: true, field: "limit"},
		{name: "list limit word", method: "GET", path: "/items?limit=ten", want: 400, invalid: true, field: "limit"},
		// A cursor is opaque to the contract: only the server knows which it issued.
		{name: "list forged cursor", method: "GET", path: "/items?cursor=%21%21", want: 400, field: "cursor"},
		{name: "list long cursor", method: "GET", path: "/items?cursor=" + strings.Repeat("A", 1025), want: 400, invalid: true, field: "cursor"},
	} {
		t.Run(ex.name, func(t *testing.T) { s.do(t, ex) })
	}

	t.Run("slash id round trip", func(t *testing.T) {
		var it api.ItemOut
		s.do(t, contractCase{method: "GET", path: "/items/a%2Fb", want: 200}).decode(t, &it)
		if it.ID != "a/b" {
			t.Errorf("id = %q, want a/b", it.ID)
		}
	})
	t.Run("pages", func(t *testing.T) {
		ids := pagedIDs(t, s, "/items?limit=2", func(page api.ItemsOut) ([]string, string) {
			var ids []string
			for _, it := range page.Items {
				ids = append(ids, it.ID)
			}
			return ids, page.NextCursor
		})
		want := []string{"a/b", "item-0", "item-1", "item-2", "item-3", "item-4", "item-5"}
		if !slices.Equal(ids, want) {
			t.Errorf("paged ids = %q, want %q", ids, want)
		}
	})
}

// pagedIDs follows a list from path (a query with a limit) through its
// next cursors, ten pages at the most; ids gives a page's ids and cursor.
func pagedIDs[P any](t *testing.T, s *contractServer, path string, ids func(P) ([]string, string)) []string {
	t.Helper()
	var all []string
	next := path
	for range 10 {
		var page P
		s.do(t, contractCase{method: "GET", path: next, want: 200}).decode(t, &page)
		got, cursor := ids(page)
		all = append(all, got...)
		if cursor == "" {
			break
		}
		next = path + "&cursor=" + url.QueryEscape(cursor)
	}
	return all
}
