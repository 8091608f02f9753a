package main

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// TestReplicas_rules runs two `recsys serve` processes on one PostgreSQL
// database: a rule or placement written at one is applied by the other
// within the bound of a model activation (SyncEvery; the notification
// makes it sooner), and so is its deletion.
func TestReplicas_rules(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := startReplica(t, dsn)
	b := startReplica(t, dsn)
	postViews(t, a, 60, 10, 20)
	ids := func(r replica, path string) ([]string, int) {
		var out api.RecommendationsOut
		st := r.getJSON(t, path, &out)
		var got []string
		for _, it := range out.Items {
			got = append(got, it.ItemID)
		}
		return got, st
	}
	top, _ := ids(b, "/users/nobody/recommendations?n=5")
	if len(top) != 5 {
		t.Fatalf("B recommends %v", top)
	}
	bound := SyncEvery + 2*time.Second

	if st := a.postJSON(t, "/admin/rules", map[string]any{"name": "no-top", "condition": `id == "` + top[0] + `"`, "action": "exclude"}, nil); st != http.StatusCreated {
		t.Fatalf("POST /admin/rules at A = %d", st)
	}
	took := within(t, bound, "B applies the rule written at A", func() bool {
		got, _ := ids(b, "/users/nobody/recommendations?n=5")
		return len(got) == 5 && !slices.Contains(got, top[0]) && slices.Equal(got[:4], top[1:])
	})
	t.Logf("B applied the rule after %v", took)

	if _, st := ids(b, "/users/nobody/recommendations?placement=home"); st != http.StatusNotFound {
		t.Fatalf("an unknown placement at B = %d, want 404", st)
	}
	if st, body := a.do(t, http.MethodPut, "/admin/placements/home", "application/json", []byte(`{"n":2}`)); st != http.StatusCreated {
		t.Fatalf("PUT /admin/placements/home at A = %d %s", st, body)
	}
	within(t, bound, "B serves the placement written at A", func() bool {
		got, st := ids(b, "/users/nobody/recommendations?placement=home")
		return st == http.StatusOK && slices.Equal(got, top[1:3])
	})

	if st, _ := b.do(t, http.MethodDelete, "/admin/rules/no-top", "", nil); st != http.StatusNoContent {
		t.Fatalf("DELETE /admin/rules/no-top at B = %d", st)
	}
	within(t, bound, "A drops the rule deleted at B", func() bool {
		got, _ := ids(a, "/users/nobody/recommendations?n=5")
		return slices.Equal(got, top)
	})
}
