package storagetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// The contract under concurrent ingest, catalogue updates and deletes.

// testConcurrentIngest: batches from many goroutines over overlapping
// users and items lose no event and double no count.
func testConcurrentIngest(t *testing.T, open Opener) {
	s := open(t, Options{})
	const workers, batches, per = 8, 10, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				evs := make([]api.Interaction, per)
				for k := range evs {
					evs[k] = Ev(fmt.Sprintf("u%d", (w+k)%5), fmt.Sprintf("i%d", (b*per+k)%13), "view")
				}
				if _, err := s.AddInteractions(bg, evs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := MustCounts(t, s)
	if c.Events != workers*batches*per || c.Users != 5 || c.Items != 13 {
		t.Fatalf("counts = %+v, want %d events of 5 users on 13 items", c, workers*batches*per)
	}
	checkInvariants(t, s)
}

// testConcurrentUpdates: concurrent read-change-writes of one item each
// see the previous one's result.
func testConcurrentUpdates(t *testing.T, open Opener) {
	s := open(t, Options{})
	if err := s.PutItems(bg, []api.Item{{ID: "x", Features: map[string]float64{"n": 0}}}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.UpdateItem(bg, "x", func(it api.Item) (api.Item, error) {
				it.Features = map[string]float64{"n": it.Features["n"] + 1}
				return it, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if it := mustItem(t, s, "x"); it.Features["n"] != n {
		t.Fatalf("n = %v after %d increments", it.Features["n"], n)
	}
}

// testConcurrentDeletes: deletes of users, items and pairs racing with
// batches and catalogue writes on the same ids leave every counter equal
// to what it counts.
func testConcurrentDeletes(t *testing.T, open Opener) {
	s := open(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	run := func(f func(k int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 30 {
				if err := f(k); err != nil && api.ErrorCode(err) != api.CodeNotFound {
					errs <- err
					return
				}
			}
		}()
	}
	for w := range 3 {
		run(func(k int) error {
			evs := make([]api.Interaction, 10)
			for j := range evs {
				evs[j] = Ev(fmt.Sprintf("u%d", (w+j+k)%6), fmt.Sprintf("i%d", (j*k+w)%7), []string{"view", "like", "dislike"}[(j+k)%3])
			}
			_, err := s.AddInteractions(bg, evs)
			return err
		})
	}
	run(func(k int) error { return s.DeleteUser(bg, fmt.Sprintf("u%d", k%6)) })
	run(func(k int) error { return s.DeleteItem(bg, fmt.Sprintf("i%d", (k*3)%7)) })
	run(func(k int) error { return s.DeleteInteraction(bg, fmt.Sprintf("u%d", k%6), fmt.Sprintf("i%d", k%7)) })
	run(func(k int) error {
		return s.PutItems(bg, []api.Item{{ID: fmt.Sprintf("i%d", k%7), Categories: []string{"c"}}})
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkInvariants(t, s)
}
