package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"recsys/api"
)

// recItem is one recommended item as JSON, with the optional fields as
// they arrive (absent or present), not as Go defaults.
type recItem struct {
	ItemID  string            `json:"item_id"`
	Score   float64           `json:"score"`
	Cold    *bool             `json:"cold"`
	Reasons []json.RawMessage `json:"reasons"`
}

// getRecs returns user's recommendations, nil when they come from the
// popularity fallback (a user with no positive).
func getRecs(t *testing.T, a *testApp, user string, query string) []recItem {
	t.Helper()
	st, body := a.do(t, "GET", "/users/"+user+"/recommendations?"+query, "", nil)
	if st != 200 {
		t.Fatalf("GET recommendations for %s?%s: %d %s", user, query, st, body)
	}
	var out struct {
		Model string    `json:"model"`
		Items []recItem `json:"items"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if out.Model == "popular" {
		return nil
	}
	if out.Model != "itemknn" {
		t.Fatalf("%s: answered by %q, want itemknn", user, out.Model)
	}
	return out.Items
}

// TestRecommend_coldSlots_ml100k: on MovieLens 100K every film has ratings,
// so none is cold, and no top-5 or top-10 may carry a film nobody rated
// 4 or more (item 104 and its like: events, no positive), which the cold
// slot used to take. A film added with the genres of one of user 1's
// films (distance 0) earns user 1's last slot, with its own content score
// 1, flagged cold, reasons only with explain=true; one with every genre
// set, far from everything, does not.
func TestRecommend_coldSlots_ml100k(t *testing.T) {
	dir := filepath.Join("..", "shared", "datasets", "ml-100k")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("%s is missing: this test needs MovieLens 100K", dir)
	}
	ctx := context.Background()
	a := startApp(t, nil)
	if _, err := importItems(ctx, a.store, "movielens", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := importEvents(ctx, a.store, "movielens", dir, newProgress(io.Discard, -1, "")); err != nil {
		t.Fatal(err)
	}
	// The app's own scheduler loop may take the job before this goroutine
	// could, so wait for the job rather than draining the queue here.
	j, err := a.sched.SubmitTrain(ctx, api.TrainRequest{Models: []string{"itemknn", "content"}, Trigger: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, a.getter(t), j.ID, 10*time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("training job ended %s: %s", j.State, j.Error)
	}
	cat, err := a.store.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unpopular := 0
	for i, id := range cat.ItemIDs {
		if id != "" && cat.Popularity[i] == 0 {
			unpopular++
		}
	}
	if unpopular == 0 {
		t.Fatal("ml-100k has no film without a positive; the test data is wrong")
	}
	served := 0
	for u := 1; u <= 943; u += 4 {
		for _, n := range []int{5, 10} {
			user := fmt.Sprint(u)
			items := getRecs(t, a, user, fmt.Sprintf("n=%d", n))
			if items != nil {
				served++
			}
			for k, it := range items {
				if cat.Popularity[cat.Index[it.ItemID]] == 0 {
					t.Fatalf("user %s n=%d: position %d is item %s, which has ratings but none ≥ 4", user, n, k+1, it.ItemID)
				}
				if it.Cold != nil || it.Reasons != nil {
					t.Fatalf("user %s n=%d: item %s has cold %v, reasons %s without explain and without a cold item", user, n, it.ItemID, it.Cold, it.Reasons)
				}
			}
		}
	}

	if served < 300 {
		t.Fatalf("only %d lists came from itemknn", served)
	}
	prof, err := a.store.Profile(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	twin, err := a.store.Item(ctx, cat.ItemIDs[prof.Positive[len(prof.Positive)-1]])
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]float64{}
	for g := range twin.Features {
		all[g] = 1
	}
	put := func(id string, f map[string]float64, hidden bool) {
		b, _ := json.Marshal(map[string]any{"features": f, "hidden": hidden})
		if st, body := a.do(t, "PUT", "/items/"+id, "application/json", b); st != 200 && st != 201 {
			t.Fatalf("PUT /items/%s: %d %s", id, st, body)
		}
	}
	put("far", all, false)
	last := func(items []recItem) recItem { return items[len(items)-1] }
	if got := getRecs(t, a, "1", "n=10"); last(got).ItemID == "far" || last(got).Cold != nil {
		t.Fatalf("far (every genre) took user 1's slot: %+v", last(got))
	}
	put("near", twin.Features, false)
	got := getRecs(t, a, "1", "n=10")
	if it := last(got); it.ItemID != "near" || it.Cold == nil || !*it.Cold || it.Score != 1 || it.Reasons != nil {
		t.Fatalf("user 1 n=10 last = %+v, want near, cold, content score 1, no reasons", it)
	}
	if got[8].Score == 1 {
		t.Fatalf("the item before near scores %v: the test cannot tell a copied score", got[8].Score)
	}
	got = getRecs(t, a, "1", "n=10&explain=true")
	if it := last(got); it.ItemID != "near" || len(it.Reasons) != 1 {
		t.Fatalf("with explain: last = %+v, want near with its one reason", it)
	}
}
