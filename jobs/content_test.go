package jobs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"recsys/api"
	"recsys/retrieval"
)

// TestEngine_contentApproximateAboveThreshold: above ContentApproxAbove
// items the content index is HNSW, below it exact; both answer
// GET /items/{id}/similar?by=content and POST /search/similar with
// (nearly) the same neighbours, and bad input keeps its 4xx error codes.
func TestEngine_contentApproximateAboveThreshold(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	var items []api.Item
	for i := 0; i < 300; i++ {
		items = append(items, api.Item{ID: fmt.Sprintf("i%03d", i), Features: map[string]float64{
			"a": rng.NormFloat64(), "b": rng.NormFloat64(), "c": rng.NormFloat64()}})
	}
	if err := st.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	names, feats, err := st.ItemFeatures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	for _, f := range feats {
		if f != nil {
			rows = append(rows, f)
		}
	}
	mean, scale, err := retrieval.Standardization(rows)
	if err != nil {
		t.Fatal(err)
	}
	met := retrieval.Euclidean(mean, scale)
	info := api.ModelInfo{Name: ContentModelName, Version: "v1"}
	exact := NewEngine(st, EngineOptions{ContentApproxAbove: -1})
	approx := NewEngine(st, EngineOptions{ContentApproxAbove: 299})
	exact.InstallContent(info, names, met)
	approx.InstallContent(info, names, met)

	agree, total := 0, 0
	for i := 0; i < 300; i += 7 {
		req := api.SimilarRequest{ItemID: items[i].ID, N: 10, By: "content"}
		a, err := exact.Similar(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := approx.Similar(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, it := range a.Items {
			want[it.ItemID] = true
		}
		for _, it := range b.Items {
			if it.ItemID == req.ItemID {
				t.Fatalf("%s is its own neighbour", req.ItemID)
			}
			if want[it.ItemID] {
				agree++
			}
		}
		total += len(a.Items)
	}
	if r := float64(agree) / float64(total); r < 0.95 {
		t.Errorf("approximate content neighbours agree with exact on %.3f, want ≥ 0.95", r)
	}
	if cm := exact.content.Load(); cm.built == nil || cm.built.searcher.Approximate() {
		t.Error("300 items with threshold -1: want exact search")
	}
	if cm := approx.content.Load(); cm.built == nil || !cm.built.searcher.Approximate() {
		t.Error("300 items with threshold 299: want HNSW search")
	}
	got, err := approx.SearchSimilar(ctx, map[string]float64{"a": 0, "b": 0, "c": 0}, 5)
	if err != nil || len(got.Items) != 5 {
		t.Fatalf("search by example: %v, %v", got, err)
	}
	var ae *api.Error
	if _, err := approx.Similar(ctx, api.SimilarRequest{ItemID: "nope", N: 5, By: "content"}); !errors.As(err, &ae) || ae.Code != api.CodeNotFound {
		t.Errorf("unknown item: got %v, want not found", err)
	}
	if _, err := approx.SearchSimilar(ctx, map[string]float64{"zzz": 1}, 5); err == nil {
		t.Error("no known feature: want a field error")
	}
}
