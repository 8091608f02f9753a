package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/content"
	"github.com/recsys-engine/recsys/retrieval"
)

// BenchmarkContentLoad is the time a start takes to load a content model
// over 100,000 items with 16 features (clustered values) above the
// approximate threshold (99,999): decoding it, projecting the catalogue
// and, with the graph persisted at training, attaching that graph
// ("persisted"), or without it, building one on GOMAXPROCS goroutines
// ("built"), as a start does; "exact" is the load of the same model
// without it under an exact threshold (-1), the part of either that is
// not the graph's. Each iteration loads all three in turn and logs each
// load's time with the load average before it.
func BenchmarkContentLoad(b *testing.B) {
	const n, dim = 100_000, 16
	st := mustStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	centres := make([][]float64, 50)
	for k := range centres {
		centres[k] = make([]float64, dim)
		for j := range centres[k] {
			centres[k][j] = rng.NormFloat64()
		}
	}
	names := make([]string, dim)
	for j := range names {
		names[j] = fmt.Sprintf("f%02d", j)
	}
	items := make([]api.Item, 0, 10_000)
	for i := range n {
		c := centres[rng.IntN(len(centres))]
		f := make(map[string]float64, dim)
		for j, name := range names {
			f[name] = c[j] + 0.3*rng.NormFloat64()
		}
		items = append(items, api.Item{ID: fmt.Sprintf("i%06d", i), Features: f})
		if len(items) == cap(items) || i == n-1 {
			if err := st.PutItems(ctx, items); err != nil {
				b.Fatal(err)
			}
			items = items[:0]
		}
	}
	fnames, feats, err := st.ItemFeatures(ctx)
	if err != nil {
		b.Fatal(err)
	}
	mean, scale := make([]float64, dim), make([]float64, dim)
	for j := range scale {
		scale[j] = 1
	}
	plain, err := content.NewContent(fnames, retrieval.Euclidean(mean, scale)).
		WithColdRule(content.ColdRule{Support: make([]uint32, dim), MaxDistance: 1})
	if err != nil {
		b.Fatal(err)
	}
	withGraph, err := content.BuildGraph(ctx, plain, feats, n-1, nil)
	if err != nil || withGraph.Graph() == nil {
		b.Fatalf("building the graph: %v", err)
	}
	blobs := map[string][]byte{}
	for name, c := range map[string]*content.Content{"persisted": withGraph, "built": plain, "exact": plain} {
		if blobs[name], err = c.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("blob: %d bytes with the graph, %d without", len(blobs["persisted"]), len(blobs["built"]))
	version := 0
	took := map[string]time.Duration{}
	b.ResetTimer()
	for range b.N {
		var round []string
		for _, kind := range []string{"persisted", "built", "exact"} {
			b.StopTimer()
			version++
			if err := st.PutModel(ctx, api.ModelInfo{Name: content.Name, Version: fmt.Sprintf("b%04d", version)}, blobs[kind]); err != nil {
				b.Fatal(err)
			}
			load, _ := os.ReadFile("/proc/loadavg")
			above := n - 1
			if kind == "exact" {
				above = -1
			}
			b.StartTimer()
			start := time.Now()
			eng := NewEngine(st, EngineOptions{ContentApproxAbove: above})
			if errs := eng.LoadPersisted(ctx, st); len(errs) != 0 {
				b.Fatal(errs)
			}
			d := time.Since(start)
			b.StopTimer()
			if ix := eng.contentSearch().built.Load(); ix == nil || ix.searcher.Approximate() != (kind != "exact") {
				b.Fatalf("%s: the loaded content index is approximate: %v", kind, ix != nil && ix.searcher.Approximate())
			}
			took[kind] += d
			round = append(round, fmt.Sprintf("%s %.2f s (load %s)", kind, d.Seconds(), strings.Fields(string(load))[0]))
			b.StartTimer()
		}
		b.Log(strings.Join(round, ", ")) // one line a round: a benchmark's log keeps ten
	}
	for kind, d := range took {
		b.ReportMetric(d.Seconds()/float64(b.N), kind+"-s/load")
	}
}
