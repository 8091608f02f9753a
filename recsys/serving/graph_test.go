package serving

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/content"
	"github.com/recsys-engine/recsys/retrieval"
	"github.com/recsys-engine/recsys/storage"
)

// logSink is a log destination safe for the engine's goroutines.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// persistGraphModel stores, as training would, a content model over the
// store's catalogue with its graph (threshold 299), and returns it.
func persistGraphModel(t *testing.T, st *storage.Store, version string) *content.Content {
	t.Helper()
	ctx := context.Background()
	names, feats, err := st.ItemFeatures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := content.NewContent(names, retrieval.Euclidean([]float64{0, 0, 0}, []float64{1, 2, 0.5})).
		WithColdRule(content.ColdRule{Support: []uint32{9, 9, 9}, MaxDistance: 4})
	if err != nil {
		t.Fatal(err)
	}
	if c, err = content.BuildGraph(ctx, c, feats, 299, nil); err != nil {
		t.Fatal(err)
	}
	if c.Graph() == nil {
		t.Fatal("no graph built over the catalogue")
	}
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutModel(ctx, api.ModelInfo{Name: content.Name, Version: version}, b); err != nil {
		t.Fatal(err)
	}
	return c
}

// loadWithLog loads the persisted models into a new engine (threshold
// 299) as a start does and returns it with what it logged.
func loadWithLog(t *testing.T, st *storage.Store) (*Engine, string) {
	t.Helper()
	var sink logSink
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour, ContentApproxAbove: 299,
		Logger: slog.New(slog.NewTextHandler(&sink, nil))})
	if errs := eng.LoadPersisted(context.Background(), st); len(errs) != 0 {
		t.Fatal(errs)
	}
	return eng, sink.String()
}

// TestEngine_persistedGraph: a content model persisted with its graph
// loads with that graph, no build, and says so; its neighbours agree with
// exact search as a built graph's do. Once a feature changes, or an item
// with features is added, the persisted graph is stale: the load builds
// a graph instead and logs why. The graph served is approximate in every
// case.
func TestEngine_persistedGraph(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	items := putABCItems(t, st, 400, "i%03d", func() (a, b, c float64) { return rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64() })
	persistGraphModel(t, st, "v1")

	eng, log := loadWithLog(t, st)
	if !strings.Contains(log, "using the graph persisted with the model") || strings.Contains(log, "content graph: built") {
		t.Fatalf("load with a matching graph logged:\n%s", log)
	}
	if !strings.Contains(log, "version=v1") || !strings.Contains(log, "items=400") {
		t.Fatalf("the log line lacks the model version or the item count:\n%s", log)
	}
	ix := eng.contentSearch().built.Load()
	if ix == nil || !ix.searcher.Approximate() {
		t.Fatal("the content index is not approximate after the load")
	}
	exact := NewEngine(st, EngineOptions{PopularityTTL: time.Hour, ContentApproxAbove: -1})
	if errs := exact.LoadPersisted(ctx, st); len(errs) != 0 {
		t.Fatal(errs)
	}
	agree, total := 0, 0
	for i := 0; i < 400; i += 9 {
		req := api.SimilarRequest{ItemID: items[i].ID, N: 10, By: "content"}
		a, err := exact.Similar(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := eng.Similar(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, it := range a.Items {
			want[it.ItemID] = true
		}
		for _, it := range b.Items {
			if want[it.ItemID] {
				agree++
			}
		}
		total += len(a.Items)
	}
	if r := float64(agree) / float64(total); r < 0.95 {
		t.Errorf("neighbours by the persisted graph agree with exact on %.3f, want ≥ 0.95", r)
	}

	// One feature of one item changes after training: same items, other
	// vectors.
	changed := items[17]
	changed.Features = map[string]float64{"a": 9, "b": 0, "c": 0}
	if err := st.PutItems(ctx, []api.Item{changed}); err != nil {
		t.Fatal(err)
	}
	eng, log = loadWithLog(t, st)
	if strings.Contains(log, "using the graph persisted") || !strings.Contains(log, "content graph: built") ||
		!strings.Contains(log, "item features changed since training") {
		t.Fatalf("load after a feature change logged:\n%s", log)
	}
	if ix := eng.contentSearch().built.Load(); ix == nil || !ix.searcher.Approximate() {
		t.Fatal("the content index is not approximate after a rebuild")
	}

	// A model trained on the changed catalogue matches again; then an
	// item with features is added.
	persistGraphModel(t, st, "v2")
	if _, log = loadWithLog(t, st); !strings.Contains(log, "using the graph persisted with the model") || !strings.Contains(log, "version=v2") {
		t.Fatalf("load of the retrained model logged:\n%s", log)
	}
	if err := st.PutItems(ctx, []api.Item{{ID: "new", Features: map[string]float64{"a": 1, "b": 1, "c": 1}}}); err != nil {
		t.Fatal(err)
	}
	eng, log = loadWithLog(t, st)
	if strings.Contains(log, "using the graph persisted") || !strings.Contains(log, "the featured items changed since training (400 then, 401 now)") {
		t.Fatalf("load after an item was added logged:\n%s", log)
	}
	got, err := eng.Similar(ctx, api.SimilarRequest{ItemID: "new", N: 5, By: "content"})
	if err != nil || len(got.Items) != 5 {
		t.Fatalf("the added item's neighbours: %+v, %v", got, err)
	}
}
