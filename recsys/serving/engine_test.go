package serving

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

var mustStore = storagetest.Open

func add(tb testing.TB, st *storage.Store, user string, typ string, items ...string) {
	tb.Helper()
	var evs []api.Interaction
	for _, it := range items {
		evs = append(evs, api.Interaction{UserID: user, ItemID: it, Type: typ})
	}
	if _, err := st.AddInteractions(context.Background(), evs); err != nil {
		tb.Fatal(err)
	}
}

// twoTastes is a store where users p1–p3 viewed {a, b, c} and q1–q4
// {x, y, z}.
func twoTastes(tb testing.TB) *storage.Store {
	tb.Helper()
	st := mustStore(tb)
	for _, u := range []string{"p1", "p2", "p3"} {
		add(tb, st, u, "view", "a", "b", "c")
	}
	for _, u := range []string{"q1", "q2", "q3", "q4"} {
		add(tb, st, u, "view", "x", "y", "z")
	}
	return st
}

// fitMatrix is the training matrix of the interactions in st.
func fitMatrix(tb testing.TB, st *storage.Store) *recsys.Matrix {
	tb.Helper()
	snap, err := st.Snapshot(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	pairs := make([]recsys.Pair, len(snap.Users))
	for i := range pairs {
		pairs[i] = recsys.Pair{User: snap.Users[i], Item: snap.Items[i]}
	}
	x, err := recsys.NewMatrix(len(snap.UserIDs), len(snap.ItemIDs), pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// fitItemKNN fits itemknn with k neighbours on the interactions in st.
func fitItemKNN(tb testing.TB, st *storage.Store, k int) recsys.Model {
	tb.Helper()
	return fitModel(tb, st, "itemknn", recsys.Params{K: k})
}

// fitModel fits the named model with p on the interactions in st.
func fitModel(tb testing.TB, st *storage.Store, name string, p recsys.Params) recsys.Model {
	tb.Helper()
	m, _ := recsys.New(name)
	if err := m.Fit(context.Background(), fitMatrix(tb, st), p); err != nil {
		tb.Fatal(err)
	}
	return m
}

func ids(items []api.ScoredItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ItemID)
	}
	return out
}

// TestEngine_popularityFallback: ranked by popularity, consumed and
// negative items left out at once, hidden items never, category filter,
// and the answer says it is the fallback.
func TestEngine_popularityFallback(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	// Popularity: a=4, b=3, c=2, d=1.
	add(t, st, "u1", "view", "a", "b", "c", "d")
	add(t, st, "u2", "view", "a", "b", "c")
	add(t, st, "u3", "view", "a", "b")
	add(t, st, "u4", "view", "a")
	if err := st.PutItems(ctx, []api.Item{{ID: "e", Categories: []string{"x"}}, {ID: "c", Categories: []string{"x"}}}); err != nil {
		t.Fatal(err)
	}
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Nanosecond})
	rec, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "new", N: 3, ExcludeConsumed: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(rec.Items), []string{"a", "b", "c"}; !slices.Equal(got, want) || rec.Fallback != "popular" {
		t.Fatalf("new user: %v (fallback %q), want %v from the fallback", got, rec.Fallback, want)
	}
	rec, _ = eng.Recommend(ctx, api.RecommendRequest{UserID: "u3", N: 10, ExcludeConsumed: true})
	if got, want := ids(rec.Items), []string{"c", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("u3 = %v, want %v", got, want)
	}
	// A dislike and a hidden flag apply at once.
	add(t, st, "u3", "dislike", "d")
	if err := st.PutItems(ctx, []api.Item{{ID: "c", Hidden: true, Categories: []string{"x"}}}); err != nil {
		t.Fatal(err)
	}
	rec, _ = eng.Recommend(ctx, api.RecommendRequest{UserID: "u3", N: 10, ExcludeConsumed: false})
	if got, want := ids(rec.Items), []string{"a", "b", "e"}; !slices.Equal(got, want) {
		t.Fatalf("u3 with consumed, after dislike d and hiding c = %v, want %v", got, want)
	}
	rec, _ = eng.Recommend(ctx, api.RecommendRequest{UserID: "new", N: 10, Categories: []string{"x"}})
	if got, want := ids(rec.Items), []string{"e"}; !slices.Equal(got, want) {
		t.Fatalf("category x = %v, want %v", got, want)
	}
	if _, err := eng.Similar(ctx, api.SimilarRequest{ItemID: "a", N: 3, By: "collaborative"}); api.ErrorCode(err) != api.CodeModelNotReady {
		t.Fatalf("similar before training: %v, want model_not_ready", err)
	}
	if _, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "u1", N: 3, Model: "itemknn"}); api.ErrorCode(err) != api.CodeModelNotReady {
		t.Fatalf("untrained model: %v, want model_not_ready", err)
	}
	if _, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "u1", N: 3, Model: "nope"}); api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("unknown model: %v, want invalid", err)
	}
}

// TestEngine_modelUsesLiveHistory: an item-based model answers from the
// history at request time, and excludes what was just consumed.
func TestEngine_modelUsesLiveHistory(t *testing.T) {
	st := twoTastes(t)
	ctx := context.Background()
	m := fitItemKNN(t, st, 5)
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Nanosecond})
	eng.Install(&Served{Info: api.ModelInfo{Name: "itemknn", Version: "v1"}, Model: m}, true)

	add(t, st, "fresh", "view", "a") // after training: a new user
	rec, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "fresh", N: 2, ExcludeConsumed: true, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(rec.Items); !slices.Equal(got, []string{"b", "c"}) || rec.ModelVersion != "v1" || rec.Fallback != "" {
		t.Fatalf("fresh after a: %v %+v, want [b c] from itemknn v1", got, rec)
	}
	if r := rec.Items[0].Reasons; len(r) != 1 || r[0].Kind != "item" || r[0].ID != "a" {
		t.Fatalf("reasons for b = %+v, want the consumed item a", r)
	}
	add(t, st, "fresh", "view", "b")
	rec, _ = eng.Recommend(ctx, api.RecommendRequest{UserID: "fresh", N: 1, ExcludeConsumed: true})
	if got := ids(rec.Items); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after consuming b: %v, want [c]", got)
	}
	sim, err := eng.Similar(ctx, api.SimilarRequest{ItemID: "x", N: 2, By: "collaborative"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(sim.Items); len(got) != 2 || !slices.Contains(got, "y") || !slices.Contains(got, "z") {
		t.Fatalf("similar to x = %v, want y and z", got)
	}
}

// TestEngine_rankingMetric: each request a model ranks is timed under its
// name, the active one's and one asked by name alike, and the popularity
// order a user without history gets under popular.
func TestEngine_rankingMetric(t *testing.T) {
	st := twoTastes(t)
	ctx := context.Background()
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Nanosecond})
	eng.Install(&Served{Info: api.ModelInfo{Name: "itemknn", Version: "v1"}, Model: fitItemKNN(t, st, 5)}, true)
	eng.Install(&Served{Info: api.ModelInfo{Name: "userknn", Version: "v2"}, Model: fitModel(t, st, "userknn", recsys.Params{K: 3})}, false)
	for _, req := range []api.RecommendRequest{
		{UserID: "p1", N: 2}, {UserID: "q1", N: 2}, {UserID: "p2", N: 2, Model: "userknn"}, {UserID: "nobody", N: 2},
	} {
		if _, err := eng.Recommend(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(eng.RankingMetric())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "recsys_recommend_ranking_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			if h.GetSampleSum() <= 0 {
				t.Errorf("%v: %d requests in %v s", m.GetLabel(), h.GetSampleCount(), h.GetSampleSum())
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "model" {
					got[l.GetValue()] = h.GetSampleCount()
				}
			}
		}
	}
	if want := map[string]uint64{"itemknn": 2, "userknn": 1, "popular": 1}; !maps.Equal(got, want) {
		t.Fatalf("requests timed by model %v, want %v", got, want)
	}
}
