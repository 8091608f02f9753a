package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// TestItemPatch_mergesPutReplaces checks PATCH /items/{id} as a JSON merge
// patch (RFC 7396): hiding an item keeps its title, categories and
// features; a null member deletes; objects merge and arrays replace; a
// feature vector replaces all features; an unknown item is 404 and is not
// created; a bad patch is a 400 or 415 that changes nothing. PUT still
// replaces the whole item.
func TestItemPatch_mergesPutReplaces(t *testing.T) {
	a := startApp(t, nil)
	put := `{"features":{"a":1,"b":2},"categories":["drama","war"],"labels":{"title":"Paths of Glory","year":"1957"}}`
	if status, body := a.do(t, http.MethodPut, "/items/m1", "application/json", []byte(put)); status != http.StatusOK {
		t.Fatalf("PUT: %d %s", status, body)
	}
	get := func(t *testing.T) api.ItemOut {
		t.Helper()
		var it api.ItemOut
		if status := a.getJSON(t, "/items/m1", &it); status != http.StatusOK {
			t.Fatalf("GET: %d", status)
		}
		return it
	}
	steps := []struct {
		name, ctype, patch string
		want               api.ItemOut
	}{
		{"hide keeps the rest", "application/merge-patch+json", `{"hidden":true}`, api.ItemOut{
			Features: map[string]float64{"a": 1, "b": 2}, Categories: []string{"drama", "war"},
			Labels: map[string]string{"title": "Paths of Glory", "year": "1957"}, Hidden: true}},
		{"null deletes one label, others merge", "application/json", `{"labels":{"year":null,"director":"Kubrick"}}`, api.ItemOut{
			Features: map[string]float64{"a": 1, "b": 2}, Categories: []string{"drama", "war"},
			Labels: map[string]string{"title": "Paths of Glory", "director": "Kubrick"}, Hidden: true}},
		{"features merge by name", "application/merge-patch+json", `{"features":{"b":null,"c":3},"hidden":false}`, api.ItemOut{
			Features: map[string]float64{"a": 1, "c": 3}, Categories: []string{"drama", "war"},
			Labels: map[string]string{"title": "Paths of Glory", "director": "Kubrick"}}},
		{"arrays replace", "application/merge-patch+json", `{"categories":["classic"]}`, api.ItemOut{
			Features: map[string]float64{"a": 1, "c": 3}, Categories: []string{"classic"},
			Labels: map[string]string{"title": "Paths of Glory", "director": "Kubrick"}}},
		{"a vector replaces all features", "application/merge-patch+json", `{"features":[5,6]}`, api.ItemOut{
			Features: map[string]float64{"0": 5, "1": 6}, Categories: []string{"classic"},
			Labels: map[string]string{"title": "Paths of Glory", "director": "Kubrick"}}},
		{"one element of a vector by its index", "application/merge-patch+json", `{"features":{"1":7}}`, api.ItemOut{
			Features: map[string]float64{"0": 5, "1": 7}, Categories: []string{"classic"},
			Labels: map[string]string{"title": "Paths of Glory", "director": "Kubrick"}}},
		{"null features and labels delete them all", "application/merge-patch+json", `{"features":null,"labels":null,"id":"m1"}`, api.ItemOut{
			Categories: []string{"classic"}}},
		{"an empty patch changes nothing", "application/merge-patch+json", `{}`, api.ItemOut{Categories: []string{"classic"}}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			status, body := a.do(t, http.MethodPatch, "/items/m1", s.ctype, []byte(s.patch))
			if status != http.StatusOK {
				t.Fatalf("PATCH %s: %d %s", s.patch, status, body)
			}
			var answered api.ItemOut
			if err := json.Unmarshal(body, &answered); err != nil {
				t.Fatal(err)
			}
			got := get(t)
			if !reflect.DeepEqual(answered, got) {
				t.Fatalf("answered %+v, stored %+v", answered, got)
			}
			s.want.ID, s.want.CreatedAt, s.want.UpdatedAt = "m1", got.CreatedAt, got.UpdatedAt
			if !reflect.DeepEqual(got, s.want) {
				t.Fatalf("after %s:\n got %+v\nwant %+v", s.patch, got, s.want)
			}
		})
	}

	before, counts := get(t), a.counts(t)
	bad := []struct {
		name, path, ctype, patch string
		status                   int
		code, field              string
	}{
		{"unknown item", "/items/nobody", "application/merge-patch+json", `{"hidden":true}`, 404, "not_found", ""},
		{"not an object", "/items/m1", "application/merge-patch+json", `[{"hidden":true}]`, 400, "invalid", ""},
		{"null body", "/items/m1", "application/merge-patch+json", `null`, 400, "invalid", ""},
		{"unknown member", "/items/m1", "application/merge-patch+json", `{"colour":"red"}`, 400, "invalid", "colour"},
		{"member name in another case", "/items/m1", "application/merge-patch+json", `{"Hidden":true}`, 400, "invalid", "Hidden"},
		{"other id", "/items/m1", "application/merge-patch+json", `{"id":"m2"}`, 400, "invalid", "id"},
		{"feature not a number", "/items/m1", "application/merge-patch+json", `{"features":{"a":"x"}}`, 400, "invalid", "features"},
		{"feature out of range", "/items/m1", "application/merge-patch+json", `{"features":{"a":1e400}}`, 400, "invalid", "features[a]"},
		{"label not a string", "/items/m1", "application/merge-patch+json", `{"labels":{"t":5}}`, 400, "invalid", "labels[t]"},
		{"label value lone surrogate", "/items/m1", "application/merge-patch+json", `{"labels":{"t":"\ud800"}}`, 400, "invalid", "labels[t]"},
		{"empty category", "/items/m1", "application/merge-patch+json", `{"categories":["ok",""]}`, 400, "invalid", "categories[1]"},
		{"hidden not a boolean", "/items/m1", "application/merge-patch+json", `{"hidden":"yes"}`, 400, "invalid", "hidden"},
		{"repeated member", "/items/m1", "application/merge-patch+json", `{"hidden":true,"hidden":false}`, 400, "invalid", "hidden"},
		{"malformed", "/items/m1", "application/merge-patch+json", `{"hidden":`, 400, "invalid", ""},
		{"wrong content type", "/items/m1", "application/xml", `{"hidden":true}`, 415, "unsupported_media", ""},
		{"text (a web page's request to a server with no keys)", "/items/m1", "text/plain", `{"hidden":true}`, 403, "forbidden", ""},
		{"json-patch is not merge-patch", "/items/m1", "application/json-patch+json", `[{"op":"remove","path":"/labels"}]`, 415, "unsupported_media", ""},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			status, body := a.do(t, http.MethodPatch, c.path, c.ctype, []byte(c.patch))
			var out api.ErrorOut
			if err := json.Unmarshal(body, &out); err != nil || status != c.status || out.Error.Code != c.code {
				t.Fatalf("status %d body %s, want %d %s", status, body, c.status, c.code)
			}
			if c.field != "" && (len(out.Error.Details) == 0 || out.Error.Details[0].Field != c.field) {
				t.Fatalf("details %+v, want field %q", out.Error.Details, c.field)
			}
			if got := get(t); !reflect.DeepEqual(got, before) {
				t.Fatalf("item changed: %+v → %+v", before, got)
			}
			if got := a.counts(t); got != counts {
				t.Fatalf("store changed: %+v → %+v", counts, got)
			}
		})
	}

	t.Run("PUT replaces", func(t *testing.T) {
		if status, body := a.do(t, http.MethodPut, "/items/m1", "application/json", []byte(`{"hidden":true}`)); status != http.StatusOK {
			t.Fatalf("PUT: %d %s", status, body)
		}
		if got := get(t); got.Categories != nil || got.Labels != nil || got.Features != nil || !got.Hidden {
			t.Fatalf("after PUT {hidden:true}: %+v, want only hidden", got)
		}
	})
}

// TestItemPatch_concurrent sends many PATCHes of one item at once, each
// adding its own label: every label is there at the end, as the read, merge
// and write of each happen in one transaction.
func TestItemPatch_concurrent(t *testing.T) {
	a := startApp(t, nil)
	if status, body := a.do(t, http.MethodPut, "/items/m1", "application/json", []byte(`{"labels":{"title":"T"}}`)); status != http.StatusOK {
		t.Fatalf("PUT: %d %s", status, body)
	}
	const n = 40
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			patch := fmt.Sprintf(`{"labels":{"l%d":"v"}}`, k)
			if status, body := a.do(t, http.MethodPatch, "/items/m1", "application/merge-patch+json", []byte(patch)); status != http.StatusOK {
				t.Errorf("PATCH %s: %d %s", patch, status, body)
			}
		})
	}
	wg.Wait()
	it, err := a.store.Item(context.Background(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(it.Labels) != n+1 || it.Labels["title"] != "T" {
		t.Fatalf("%d labels after %d concurrent patches: %v", len(it.Labels), n, it.Labels)
	}
}
