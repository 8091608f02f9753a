package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// TestPostgres_serveAndRestart: a server on PostgreSQL takes events and
// items, trains, and recommends; a second server started on the same
// database (a replica, or a restart on another machine: no file is shared)
// serves the same counts and the trained model straight from the database.
func TestPostgres_serveAndRestart(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := startApp(t, func(c *Config) { c.DB = dsn })
	var evs []map[string]any
	for u := range 30 {
		for i := range 12 {
			if (u+i)%3 != 0 {
				evs = append(evs, map[string]any{"user_id": fmt.Sprintf("u%d", u), "item_id": fmt.Sprintf("i%d", (u/5+i)%20), "type": "view"})
			}
		}
	}
	if st := a.postJSON(t, "/interactions", map[string]any{"interactions": evs}, nil); st != http.StatusOK && st != http.StatusCreated && st != http.StatusAccepted {
		t.Fatalf("POST /interactions = %d", st)
	}
	if j := waitJob(t, a.getter(t), a.retrain(t, "itemknn"), time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("training job = %+v", j)
	}
	var rec api.RecommendationsOut
	if st := a.getJSON(t, "/users/u1/recommendations?n=5&model=itemknn", &rec); st != http.StatusOK || len(rec.Items) == 0 {
		t.Fatalf("recommendations = %d %+v", st, rec)
	}
	want := a.counts(t)
	b := startApp(t, func(c *Config) { c.DB = dsn })
	if got := b.counts(t); got != want || got.Events != int64(len(evs)) {
		t.Fatalf("second server counts %+v, first %+v, posted %d", got, want, len(evs))
	}
	var rec2 api.RecommendationsOut
	if st := b.getJSON(t, "/users/u1/recommendations?n=5&model=itemknn", &rec2); st != http.StatusOK || rec2.ModelVersion != rec.ModelVersion ||
		!sameItems(rec.Items, rec2.Items) {
		t.Fatalf("second server recommends %d %+v, first %+v", st, rec2, rec)
	}
}

func sameItems(a, b []api.ScoredItem) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k].ItemID != b[k].ItemID {
			return false
		}
	}
	return true
}

// TestPostgres_restartUnderLoad stops the PostgreSQL server (immediate
// shutdown: connections break as in a crash) while clients post events and
// read, and starts it again. While it is down every request is answered
// 503 storage_unavailable within the request timeout, never 500; once it
// is back the same server answers 2xx again without a restart; and no
// acknowledged event is lost.
func TestPostgres_restartUnderLoad(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	dsn := pgtest.SchemaOn(t, cluster.DSN())
	const timeout = 2 * time.Second
	a := startApp(t, func(c *Config) {
		c.DB = dsn
		c.Limits.RequestTimeout = timeout
		c.AllowFallback = true
		c.Jobs.NewEvents, c.Jobs.Interval = 0, 0
	})
	var (
		acked      atomic.Int64 // events in batches answered 2xx
		mu         sync.Mutex
		statuses   = map[string]int{}
		slowest    time.Duration
		down       atomic.Bool
		okWhenDown atomic.Int64
		stop       = make(chan struct{})
		wg         sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	record := func(status int, body []byte, took time.Duration) {
		key := fmt.Sprint(status)
		if status >= 300 {
			var out api.ErrorOut
			_ = json.Unmarshal(body, &out)
			key += " " + out.Error.Code
		}
		mu.Lock()
		statuses[key]++
		slowest = max(slowest, took)
		mu.Unlock()
	}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var req *http.Request
				events := 0
				if n%2 == 0 {
					evs := make([]map[string]any, 50)
					for k := range evs {
						evs[k] = map[string]any{"user_id": fmt.Sprintf("w%d-%d", w, n%40), "item_id": fmt.Sprintf("i%d", (n+k)%97), "type": "view"}
					}
					events = len(evs)
					body, _ := json.Marshal(map[string]any{"interactions": evs})
					req, _ = http.NewRequest(http.MethodPost, a.URL+"/interactions", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
				} else {
					path := "/stats"
					if n%4 == 1 {
						path = "/users/w0-0/recommendations?n=5"
					}
					req, _ = http.NewRequest(http.MethodGet, a.URL+path, nil)
				}
				wasDown := down.Load()
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("request: %v", err)
					return
				}
				var buf bytes.Buffer
				_, _ = buf.ReadFrom(resp.Body)
				resp.Body.Close()
				record(resp.StatusCode, buf.Bytes(), time.Since(start))
				if resp.StatusCode < 300 {
					acked.Add(int64(events))
					if wasDown && down.Load() {
						okWhenDown.Add(1)
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	cluster.Stop()
	down.Store(true)
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	unavailable := statuses["503 storage_unavailable"]
	mu.Unlock()
	down.Store(false)
	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	// The pool reconnects on demand: requests succeed again soon.
	recovered := false
	for range 100 {
		if st, _ := a.do(t, http.MethodGet, "/stats", "", nil); st == http.StatusOK {
			recovered = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("statuses %v, slowest %v, %d events acknowledged", statuses, slowest, acked.Load())
	if !recovered {
		t.Fatal("the server did not recover within 10 s of PostgreSQL coming back")
	}
	if unavailable == 0 {
		t.Fatal("no request was answered 503 storage_unavailable while PostgreSQL was down")
	}
	for k := range statuses {
		if k != "200" && k != "201" && k != "202" && k != "503 storage_unavailable" {
			t.Errorf("answered %s %d times; want only 2xx and 503 storage_unavailable", k, statuses[k])
		}
	}
	if okWhenDown.Load() > 0 {
		t.Errorf("%d requests sent and answered while PostgreSQL was down succeeded", okWhenDown.Load())
	}
	if slowest > timeout+time.Second {
		t.Errorf("slowest answer took %v, past the %v request timeout", slowest, timeout)
	}
	if c := a.counts(t); c.Events < acked.Load() {
		t.Errorf("events stored %d < acknowledged %d: an acknowledged write was lost", c.Events, acked.Load())
	}
}

func TestMain(m *testing.M) {
	// The commands the tests run share this process: a budget one of
	// them sets must not become the whole test binary's memory limit.
	setMemoryLimit = func(int64) int64 { return 0 }
	pgtest.Main(m)
}
