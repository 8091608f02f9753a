package jobs

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/serving"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// fakeShared is a bbolt store with a shared queue in memory: it records
// what the scheduler asks of the queue, and its lock is always free.
type fakeShared struct {
	*storage.Store
	mu        sync.Mutex
	tryLead   int
	claims    int
	queued    []api.Job
	announced []string
}

func (f *fakeShared) TryLead(context.Context) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tryLead++
	return true, nil
}

func (f *fakeShared) PendingJobs(context.Context) ([]api.Job, error) { return nil, nil }

func (f *fakeShared) ClaimQueuedJob(context.Context) (api.Job, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims++
	return api.Job{}, false, nil
}

func (f *fakeShared) CancelQueuedJob(context.Context, string, string) (api.Job, bool, error) {
	return api.Job{}, false, nil
}

func (f *fakeShared) FailJobs(context.Context, []string, string) (int, error) { return 0, nil }

func (f *fakeShared) QueueJob(_ context.Context, j api.Job, _ bool) (*api.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queued = append(f.queued, j)
	return nil, nil
}

func (f *fakeShared) RequestCancel(context.Context, string) error { return nil }

func (f *fakeShared) CancelRequested(context.Context, string) (bool, error) { return false, nil }

func (f *fakeShared) AnnounceQueued(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.announced = append(f.announced, id)
	return nil
}

// counts reads what the scheduler asked so far.
func (f *fakeShared) counts() (tryLead, claims, queued, announced int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tryLead, f.claims, len(f.queued), len(f.announced)
}

// A replica with NeverLead (serve --role serve) never tries the leader
// lock, never claims a job and fires no trigger, however long it runs and
// however many events arrive; a retrain asked there is queued in the
// shared queue and announced to the leader. The same scheduler without
// NeverLead takes the free lock at once, so the test tells them apart.
func TestScheduler_neverLead(t *testing.T) {
	for _, never := range []bool{true, false} {
		st := &fakeShared{Store: storagetest.Open(t)}
		eng := serving.NewEngine(st, serving.EngineOptions{})
		s := NewScheduler(st, eng, Options{Replicated: true, NeverLead: never, NewEvents: 1,
			CheckEvery: time.Millisecond, LeadEvery: time.Millisecond})
		if _, err := st.AddInteractions(context.Background(), []api.Interaction{{UserID: "u", ItemID: "i", Type: "view", Timestamp: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Run(ctx) }()
		if never {
			time.Sleep(50 * time.Millisecond) // fifty lock periods and trigger checks
			if _, claims, queued, _ := st.counts(); claims != 0 || queued != 0 || s.Leading() {
				t.Errorf("NeverLead: %d claims, %d jobs queued by a trigger, leading %v; want none", claims, queued, s.Leading())
			}
			j, err := s.SubmitTrain(ctx, api.TrainRequest{Models: []string{"itemknn"}, Trigger: "api"})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			tryLead, claims, queued, announced := st.counts()
			if tryLead != 0 || claims != 0 || queued != 1 || announced != 1 || st.announced[0] != j.ID {
				t.Errorf("NeverLead after a submit: TryLead %d, claims %d, queued %d, announced %v (job %s); want 0, 0, 1, [%[5]s]",
					tryLead, claims, queued, st.announced, j.ID)
			}
		} else {
			deadline := time.Now().Add(10 * time.Second)
			for !s.Leading() && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if tryLead, _, _, _ := st.counts(); tryLead == 0 || !s.Leading() {
				t.Errorf("without NeverLead: TryLead %d, leading %v; want the free lock taken", tryLead, s.Leading())
			}
		}
		cancel()
		<-done
	}
}
