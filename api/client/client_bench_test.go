package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/recsys-engine/recsys/api/client"
)

const recBody = `{"user_id":"1","model":"kunn-i","model_version":"v000005","items":[{"item_id":"318","score":2.6126772348987846},{"item_id":"357","score":2.5590399811167566},{"item_id":"423","score":2.353461993455069},{"item_id":"483","score":2.221731254069381},{"item_id":"655","score":2.1612114858383737},{"item_id":"496","score":2.116255063004342},{"item_id":"651","score":2.1136441565080033},{"item_id":"474","score":2.0917816853020876},{"item_id":"568","score":2.085762836140558},{"item_id":"427","score":2.074574851071637}]}`

func recServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, recBody)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkClient_Recommend is one GET /users/{id}/recommendations through
// the client, answer decoded, against a server that answers a fixed list
// of 10; BenchmarkRaw_Recommend the same request by hand, answer
// discarded: the difference is the client's cost per request.
func BenchmarkClient_Recommend(b *testing.B) {
	srv := recServer(b)
	c := client.New(srv.URL)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Recommend(ctx, "1", client.RecommendOptions{N: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRaw_Recommend(b *testing.B) {
	srv := recServer(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/users/1/recommendations?n=10", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
