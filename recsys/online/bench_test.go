package online_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/online"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// BenchmarkService_Shown is what the impression log adds to a
// recommendation request: naming the answer and queueing its list, with
// the writer running against a bbolt store.
func BenchmarkService_Shown(b *testing.B) {
	st := storagetest.Open(b)
	s := online.New(st, online.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	rec := &api.Recommendations{UserID: "u", Model: "itemknn", ModelVersion: "v000001", Items: make([]api.ScoredItem, 10)}
	for k := range rec.Items {
		rec.Items[k].ItemID = fmt.Sprint("item-", k)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.Shown(api.RecommendRequest{}, rec, api.Assignment{})
		}
	})
}
