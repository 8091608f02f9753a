package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/handlers"
	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
)

// benchApp is an App holding MovieLens 100K with itemknn, kunn-i (active)
// and the content metric trained, driven through its http.Handler without
// a network round trip. Its listener is never served.
func benchApp(b *testing.B) *App {
	b.Helper()
	dir := filepath.Join("..", "shared", "datasets", "ml-100k")
	datasettest.Require(b, dir)
	c := Config{Addr: "127.0.0.1:0", DB: filepath.Join(b.TempDir(), "bench.db"),
		Policy: api.DefaultPolicy().WithMin("rating", 4), Limits: handlers.DefaultLimits}
	ctx := context.Background()
	app, err := NewApp(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	app.ln.Close()
	b.Cleanup(func() { app.Close() })
	if _, err := importItems(ctx, app.store, itemSource{format: "movielens", path: dir}); err != nil {
		b.Fatal(err)
	}
	if _, err := importEvents(ctx, app.store, "movielens", dir, newProgress(io.Discard, -1, "")); err != nil {
		b.Fatal(err)
	}
	if _, err := app.sched.SubmitTrain(ctx, api.TrainRequest{Models: []string{"itemknn", "kunn-i", "content"}, Trigger: "bench"}); err != nil {
		b.Fatal(err)
	}
	app.sched.RunQueued(ctx)
	if _, err := app.sched.Activate(ctx, "kunn-i"); err != nil {
		b.Fatal(err)
	}
	return app
}

// serve runs one request through the handler and checks its status.
func serve(b *testing.B, h http.Handler, req *http.Request, want int) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != want {
		b.Fatalf("%s %s: status %d, want %d: %s", req.Method, req.URL, w.Code, want, w.Body)
	}
}

// BenchmarkHandler_Recommend is GET /users/{id}/recommendations?n=10 end to
// end inside the process: routing, middleware, the profile read, scoring,
// cold-item slots and JSON encoding. The parallel case runs 32 goroutines,
// like `recsys bench --concurrency 32`, without the client's cost.
func BenchmarkHandler_Recommend(b *testing.B) {
	app := benchApp(b)
	h := app.srv.Handler
	for _, model := range []string{"kunn-i", "itemknn", "popular"} {
		b.Run("model="+model, func(b *testing.B) {
			b.ReportAllocs()
			u := 0
			for b.Loop() {
				serve(b, h, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/users/%d/recommendations?n=10&model=%s", 1+u%943, model), nil), http.StatusOK)
				u++
			}
		})
	}
	b.Run("parallel=32", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
			for pb.Next() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/users/%d/recommendations?n=10", 1+rng.IntN(943)), nil))
				if w.Code != http.StatusOK {
					b.Errorf("status %d", w.Code)
					return
				}
			}
		})
	})
}

// BenchmarkHandler_Similar is GET /items/{id}/similar?n=10 (collaborative,
// from the item neighbour lists) and by=content (exact search under the
// learned metric).
func BenchmarkHandler_Similar(b *testing.B) {
	app := benchApp(b)
	h := app.srv.Handler
	for _, by := range []string{"collaborative", "content"} {
		b.Run("by="+by, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				serve(b, h, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/items/%d/similar?n=10&by=%s", 1+i%1682, by), nil), http.StatusOK)
				i++
			}
		})
	}
}

// BenchmarkHandler_Ingest is POST /interactions with a batch of 100 or
// 1,000 events: decoding, validation and the durable commit.
func BenchmarkHandler_Ingest(b *testing.B) {
	app := benchApp(b)
	h := app.srv.Handler
	for _, size := range []int{100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, uint64(size)))
			bodies := make([][]byte, 32)
			for k := range bodies {
				var sb strings.Builder
				sb.WriteString(`{"interactions":[`)
				for e := 0; e < size; e++ {
					if e > 0 {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, `{"user_id":"bench-%d","item_id":"%d","type":"view"}`, rng.IntN(5000), 1+rng.IntN(1682))
				}
				sb.WriteString(`]}`)
				bodies[k] = []byte(sb.String())
			}
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/interactions", bytes.NewReader(bodies[k%len(bodies)]))
				req.Header.Set("Content-Type", "application/json")
				serve(b, h, req, http.StatusCreated)
				k++
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkHandler_RequestShapes is POST /recommendations for an anonymous
// history of 20 items, POST /users/{id}/rerank of 100 candidates, and GET
// recommendations at offset 20 with 10 excluded ids, with kunn-i.
func BenchmarkHandler_RequestShapes(b *testing.B) {
	app := benchApp(b)
	h := app.srv.Handler
	ids := func(rng *rand.Rand, k int) string {
		out := make([]string, k)
		for j := range out {
			out[j] = fmt.Sprintf("%q", fmt.Sprint(1+rng.IntN(1682)))
		}
		return strings.Join(out, ",")
	}
	post := func(path, body string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	b.Run("history=20", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 1))
		b.ReportAllocs()
		for b.Loop() {
			serve(b, h, post("/recommendations", `{"items":[`+ids(rng, 20)+`]}`), http.StatusOK)
		}
	})
	b.Run("rerank=100", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(2, 2))
		b.ReportAllocs()
		for b.Loop() {
			serve(b, h, post(fmt.Sprintf("/users/%d/rerank", 1+rng.IntN(943)), `{"items":[`+ids(rng, 100)+`]}`), http.StatusOK)
		}
	})
	b.Run("offset=20,exclude=10", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(3, 3))
		b.ReportAllocs()
		for b.Loop() {
			ex := strings.ReplaceAll(ids(rng, 10), `"`, "")
			serve(b, h, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/users/%d/recommendations?n=10&offset=20&exclude=%s", 1+rng.IntN(943), ex), nil), http.StatusOK)
		}
	})
}
