package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// The faults of issue 16 (item 5) and the leader's own: replicas as
// processes of the built binary on a real PostgreSQL server, which the
// tests stop, start and cut sessions of.

// sessionOf is the server process of replica pid's connection in role
// ("listen", "leader lock"; storage/postgres names them), 0 when none.
func sessionOf(t *testing.T, dsn, role string, pid int) int {
	t.Helper()
	var backend int
	pgtest.SQL(t, dsn, func(c *pgx.Conn) error {
		err := c.QueryRow(context.Background(), `SELECT pid FROM pg_stat_activity WHERE application_name = $1`,
			fmt.Sprintf("recsys %s (pid %d)", role, pid)).Scan(&backend)
		if err == pgx.ErrNoRows {
			return nil
		}
		return err
	})
	return backend
}

// checkBatches reads every batch user through r: an acknowledged batch
// must be there in full, any other in full or not at all (a batch is one
// transaction), and /stats must count exactly the events found and the
// other events stored (others).
func checkBatches(t *testing.T, r replica, perBatch int, acked, sent []string, others int64) {
	t.Helper()
	isAcked := map[string]bool{}
	for _, u := range acked {
		isAcked[u] = true
	}
	var total int64
	found := 0
	for _, user := range sent {
		var u struct{ Events int64 }
		switch st := r.getJSON(t, "/users/"+user, &u); {
		case st == http.StatusOK && u.Events == int64(perBatch):
			total += u.Events
			found++
		case st == http.StatusNotFound && !isAcked[user]:
		default:
			t.Fatalf("batch %s (acknowledged %v): status %d, %d events; want all %d, or none if unacknowledged", user, isAcked[user], st, u.Events, perBatch)
		}
	}
	var stats struct{ Events int64 }
	if st := r.getJSON(t, "/stats", &stats); st != http.StatusOK || stats.Events != total+others {
		t.Fatalf("/stats = %d, %d events; the batches hold %d, and %d others were stored", st, stats.Events, total, others)
	}
	t.Logf("%d batches sent, %d acknowledged, %d stored (%d events)", len(sent), len(acked), found, total)
}

// TestReplicas_sigkillUnderWrites: four writers post batches to each of
// two replicas; one replica is killed (SIGKILL) mid-load while the other's
// writers go on. Read back through the survivor, every acknowledged batch
// is there in full, none in part, and the counters agree.
func TestReplicas_sigkillUnderWrites(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := startReplica(t, dsn), startReplica(t, dsn)
	const perBatch = 100
	item := func(k, j int) string { return fmt.Sprintf("i%d", (k*7+j)%300) }
	runA := postBatches(a.URL, perBatch, func(w, k int) string { return fmt.Sprintf("a-w%d-b%d", w, k) }, item)
	runB := postBatches(b.URL, perBatch, func(w, k int) string { return fmt.Sprintf("b-w%d-b%d", w, k) }, item)
	time.Sleep(time.Duration(700+rand.IntN(800)) * time.Millisecond)
	a.kill()
	time.Sleep(700 * time.Millisecond) // B's writers go on
	ackedA, sentA := runA()
	ackedB, sentB := runB()
	if len(ackedA) == 0 || len(ackedB) == 0 {
		t.Fatalf("acknowledged batches: %d at A, %d at B; the test proves nothing", len(ackedA), len(ackedB))
	}
	if len(sentA) == len(ackedA) {
		t.Logf("every batch sent to A was answered before the kill")
	}
	checkBatches(t, b, perBatch, append(ackedA, ackedB...), append(sentA, sentB...), 0)
}

// outcome is one request of the load in TestReplicas_postgresRestart.
type outcome struct {
	start, end time.Time
	status     int
	code       string // the error envelope's code
	message    string
}

// TestReplicas_postgresRestart: with clients writing and reading at two
// replicas, and a training job running, the PostgreSQL server is stopped
// (immediate shutdown: every session breaks, the leader's lock with it)
// until the leader has stopped leading and requests sent meanwhile have
// been answered, and started again on the same port. While it is down every
// answer is 503 storage_unavailable with the error envelope, within the
// request timeout; the leader stops leading. Once it is back, without a
// restart of either replica: both take writes, one leads again (its lock
// session is the lock's holder), both LISTEN again, the interrupted job
// has ended, a model activated at one replica is served by the other, a
// new training job runs, and no acknowledged event was lost.
func TestReplicas_postgresRestart(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	dsn := pgtest.SchemaOn(t, cluster.DSN())
	const timeout = 2 * time.Second
	a := startReplica(t, dsn, "--request-timeout", timeout.String())
	within(t, 10*time.Second, "the first replica leads", func() bool { return a.leading(t) })
	b := startReplica(t, dsn, "--request-timeout", timeout.String())
	seeded := postViews(t, a, 600, 30, 150)
	if j := waitJob(t, b.getter(t), b.retrain(t, "popular", "itemknn"), 2*time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("first training job: %+v", j)
	}

	// The load: two clients per replica, each alternating a batch of 20
	// events (a user of its own per batch), a recommendation and /stats.
	var (
		mu       sync.Mutex
		outcomes []outcome
		acked    []string
		sent     []string
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	const perBatch = 20
	client := &http.Client{Timeout: 4 * timeout}
	for c := range 4 {
		r := []replica{a, b}[c%2]
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var req *http.Request
				user := ""
				switch n % 3 {
				case 0:
					user = fmt.Sprintf("c%d-b%d", c, n)
					batch := make([]map[string]any, perBatch)
					for k := range batch {
						batch[k] = map[string]any{"user_id": user, "item_id": fmt.Sprintf("i%d", (n+k)%150), "type": "view"}
					}
					body, _ := json.Marshal(map[string]any{"interactions": batch})
					req, _ = http.NewRequest(http.MethodPost, r.URL+"/interactions", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					mu.Lock()
					sent = append(sent, user)
					mu.Unlock()
				case 1:
					req, _ = http.NewRequest(http.MethodGet, fmt.Sprintf("%s/users/u%d/recommendations?n=5", r.URL, n%600), nil)
				default:
					req, _ = http.NewRequest(http.MethodGet, r.URL+"/stats", nil)
				}
				o := outcome{start: time.Now()}
				resp, err := client.Do(req)
				o.end = time.Now()
				if err != nil {
					o.code = "transport: " + err.Error()
				} else {
					var body bytes.Buffer
					_, _ = body.ReadFrom(resp.Body)
					resp.Body.Close()
					o.status = resp.StatusCode
					if o.status >= 300 {
						var e api.ErrorOut
						if json.Unmarshal(body.Bytes(), &e) != nil {
							o.code = "not the error envelope: " + body.String()
						}
						o.code, o.message = e.Error.Code, e.Error.Message
					}
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				if user != "" && o.status == http.StatusCreated {
					acked = append(acked, user)
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	stopLoad := func() { close(stop); wg.Wait() }
	defer func() {
		select {
		case <-stop:
		default:
			stopLoad()
		}
	}()

	// A training job (matrix factorisation: seconds), running when the
	// server stops.
	interrupted := b.retrain(t, "bpr", "mfauc")
	waitJob(t, b.getter(t), interrupted, time.Minute, func(j api.Job) bool { return j.State != api.JobQueued })
	time.Sleep(500 * time.Millisecond)
	cluster.Stop()
	downAt := time.Now()
	// The server stays down until the leader has noticed (its next lock
	// check, within a lead period) and the clients have been answered
	// during the outage.
	within(t, 2*jobs.DefaultLeadEvery+5*time.Second, "neither replica leads while the server is down", func() bool { return !a.leading(t) && !b.leading(t) })
	within(t, 5*time.Second, "a request sent while the server is down is answered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(outcomes, func(o outcome) bool { return o.start.After(downAt) })
	})
	upAt := time.Now()
	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the server was down %v", time.Since(downAt).Round(time.Millisecond))

	// Back without a restart of either replica.
	for _, r := range []replica{a, b} {
		took := within(t, 15*time.Second, r.URL+" takes writes again", func() bool {
			return r.postJSON(t, "/interactions", map[string]any{"interactions": []map[string]any{{"user_id": "probe", "item_id": "i1", "type": "view"}}}, nil) == http.StatusCreated
		})
		t.Logf("%s took writes again %v after the server started", r.URL, took)
	}
	var leader, follower replica
	took := within(t, 10*time.Second, "one replica leads again", func() bool { return a.leading(t) || b.leading(t) })
	leader, follower = a, b
	if b.leading(t) {
		leader, follower = b, a
	}
	t.Logf("%s leads again %v later", leader.URL, took)
	for range 10 {
		if a.leading(t) && b.leading(t) {
			t.Fatal("both replicas lead")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, app := pgtest.LeaderLock(t, dsn); app != fmt.Sprintf("recsys leader lock (pid %d)", leader.pid) {
		t.Fatalf("the leader lock is held by %q; the leader is pid %d", app, leader.pid)
	}
	for _, r := range []replica{a, b} {
		within(t, 10*time.Second, r.URL+" listens again", func() bool { return sessionOf(t, dsn, "listen", r.pid) != 0 })
	}
	j := waitJob(t, b.getter(t), interrupted, 30*time.Second, api.Job.Done)
	if j.State == api.JobSucceeded {
		t.Fatalf("the job running while the server was down succeeded: %+v", j)
	}
	t.Logf("the job running during the outage ended %s: %s", j.State, j.Error)

	// Models and jobs go on.
	other := "popular"
	if follower.recs(t, "u2", "").Model == other {
		other = "itemknn"
	}
	if st := follower.postJSON(t, "/admin/models/"+other+"/activate", map[string]any{}, nil); st != http.StatusOK {
		t.Fatalf("activate %s = %d", other, st)
	}
	within(t, 5*time.Second, "the leader serves "+other, func() bool { return leader.recs(t, "u2", "").Model == other })
	j = waitJob(t, leader.getter(t), follower.retrain(t, "itemknn"), 2*time.Minute, api.Job.Done)
	if j.State != api.JobSucceeded {
		t.Fatalf("training after the restart: %+v", j)
	}
	version := strings.SplitN(j.Versions[0], "@", 2)[1]
	for _, r := range []replica{a, b} {
		within(t, 5*time.Second, r.URL+" serves itemknn "+version, func() bool {
			var out api.RecommendationsOut
			return r.getJSON(t, "/users/u2/recommendations?n=10&model=itemknn", &out) == http.StatusOK && out.ModelVersion == version
		})
	}

	stopLoad()
	mu.Lock()
	defer mu.Unlock()
	statuses := map[string]int{}
	var slowest time.Duration
	duringOutage, wrong := 0, 0
	for _, o := range outcomes {
		key := fmt.Sprint(o.status)
		if o.status >= 300 || o.status == 0 {
			key += " " + o.code
		}
		statuses[key]++
		slowest = max(slowest, o.end.Sub(o.start))
		if o.status >= 300 && o.message == "" {
			t.Errorf("answer %d %q has no message in its error envelope", o.status, o.code)
		}
		if o.start.After(downAt) && o.end.Before(upAt) {
			duringOutage++
			if o.status != http.StatusServiceUnavailable || o.code != api.CodeStorageUnavailable {
				if wrong++; wrong == 1 {
					t.Errorf("sent and answered while the server was down: %d %s %q", o.status, o.code, o.message)
				}
			}
		}
	}
	if wrong > 1 {
		t.Errorf("%d answers in all while the server was down were not 503 storage_unavailable", wrong)
	}
	t.Logf("statuses %v; slowest %v; %d requests within the outage", statuses, slowest, duringOutage)
	for k, n := range statuses {
		if k != "200" && k != "201" && k != "202" && k != "503 "+api.CodeStorageUnavailable {
			t.Errorf("answered %s %d times; want only 2xx and 503 storage_unavailable", k, n)
		}
	}
	if duringOutage == 0 {
		t.Error("no request was sent and answered while the server was down")
	}
	if slowest > timeout+time.Second {
		t.Errorf("the slowest answer took %v, past the %v request timeout", slowest, timeout)
	}
	var probe struct{ Events int64 }
	if st := a.getJSON(t, "/users/probe", &probe); st != http.StatusOK {
		t.Fatalf("GET /users/probe = %d", st)
	}
	checkBatches(t, a, perBatch, acked, sent, int64(seeded)+probe.Events)
}

// TestReplicas_leaderLosesLock: issue 16's leader faults.
//
// Training requests at both replicas at once queue one job (the others get
// 409 naming it). The leader's lock session is ended under it while it
// trains (pg_terminate_backend, as a network fault would) and the test
// takes the lock itself: the replica stops leading and stops its job,
// which ends failed as interrupted and stores no model; no replica leads
// while the test holds the lock, and one does once it lets go. A cancel
// asked at the follower while the leader's LISTEN connection is down (the
// notification is lost) still stops the job at the leader.
func TestReplicas_leaderLosesLock(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := startReplica(t, dsn)
	within(t, 10*time.Second, "the first replica leads", func() bool { return a.leading(t) })
	b := startReplica(t, dsn)
	postViews(t, a, 1500, 40, 120)

	// Eight training requests at once, four at each replica: one job.
	var (
		mu       sync.Mutex
		accepted []string
		told     = map[string]int{}
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for k := range 8 {
		r := []replica{a, b}[k%2]
		wg.Go(func() {
			<-start
			resp, err := client.Post(r.URL+"/admin/retrain", "application/json", strings.NewReader(`{"models":["itemknn"]}`))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case http.StatusAccepted:
				var out api.JobAccepted
				_ = json.NewDecoder(resp.Body).Decode(&out)
				accepted = append(accepted, out.JobID)
			case http.StatusConflict:
				var e api.ErrorOut
				_ = json.NewDecoder(resp.Body).Decode(&e)
				for _, d := range e.Error.Details {
					if d.Field == "job_id" {
						told[d.Problem]++
					}
				}
			default:
				t.Errorf("POST /admin/retrain = %d", resp.StatusCode)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(accepted) != 1 || told[accepted[0]] != 7 {
		t.Fatalf("8 training requests at once: accepted %v, 409s naming %v; want one accepted and 7 naming it", accepted, told)
	}
	waitJob(t, a.getter(t), accepted[0], 2*time.Minute, api.Job.Done)

	// The leader loses its lock session while it trains.
	id := b.retrain(t, "bpr", "mfauc") // matrix factorisation: 8 s or more
	waitJob(t, b.getter(t), id, time.Minute, func(j api.Job) bool { return j.State == api.JobRunning })
	if !a.leading(t) || b.leading(t) {
		t.Fatalf("leaders before the fault: a %v, b %v; want a", a.leading(t), b.leading(t))
	}
	ctx := context.Background()
	mine, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close(ctx)
	held := false
	for attempt := 0; !held && attempt < 5; attempt++ {
		pid, app := pgtest.LeaderLock(t, dsn)
		if pid == 0 {
			t.Fatalf("no session holds the leader lock")
		}
		t.Logf("ending the session of %q", app)
		pgtest.Terminate(t, dsn, pid)
		for deadline := time.Now().Add(2 * time.Second); !held && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if err := mine.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext('recsys leader ' || current_schema()))`).Scan(&held); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !held {
		t.Fatal("the test could not take the leader lock")
	}
	lost := time.Now()
	within(t, 5*time.Second, "A stops leading", func() bool { return !a.leading(t) })
	t.Logf("A stopped leading %v after it lost the lock", time.Since(lost))
	j := waitJob(t, a.getter(t), id, 10*time.Second, api.Job.Done)
	// Failed as interrupted, by the replica itself ("lost the training
	// leader lock") or by B if B led for a moment before the test took the
	// lock ("the replica running it stopped").
	if j.State != api.JobFailed || !strings.HasPrefix(j.Error, "interrupted: ") || len(j.Versions) != 0 {
		t.Fatalf("the job of the replica that lost the lock: %+v; want failed, interrupted, no versions", j)
	}
	throughout(t, 2*jobs.DefaultLeadEvery, func() string {
		if la, lb := a.leading(t), b.leading(t); la || lb {
			return fmt.Sprintf("a replica leads while the test holds the lock: a %v, b %v", la, lb)
		}
		return ""
	})
	if again := waitJob(t, b.getter(t), id, time.Second, api.Job.Done); again.State != j.State || again.Error != j.Error {
		t.Fatalf("the ended job changed: %+v, then %+v", j, again)
	}
	mine.Close(ctx)
	within(t, 10*time.Second, "a replica leads once the lock is free", func() bool { return a.leading(t) || b.leading(t) })
	leader, follower := a, b
	if b.leading(t) {
		leader, follower = b, a
	}
	if leader.leading(t) && follower.leading(t) {
		t.Fatal("both replicas lead")
	}

	// A cancel asked while the leader's LISTEN connection is down.
	id = follower.retrain(t, "bpr", "mfauc")
	waitJob(t, follower.getter(t), id, time.Minute, func(j api.Job) bool { return j.State == api.JobRunning })
	listen := sessionOf(t, dsn, "listen", leader.pid)
	if listen == 0 {
		t.Fatalf("the leader (pid %d) has no LISTEN session", leader.pid)
	}
	pgtest.Terminate(t, dsn, listen)
	if st, _ := follower.do(t, http.MethodDelete, "/admin/jobs/"+id, "", nil); st != http.StatusAccepted {
		t.Fatalf("DELETE /admin/jobs/%s = %d", id, st)
	}
	asked := time.Now()
	j = waitJob(t, follower.getter(t), id, 10*time.Second, api.Job.Done)
	if j.State != api.JobCancelled {
		t.Fatalf("the job cancelled while the leader did not listen: %+v", j)
	}
	t.Logf("cancelled %v after the request, the notification lost", time.Since(asked).Round(time.Millisecond))
	if j := waitJob(t, leader.getter(t), follower.retrain(t, "itemknn"), 2*time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("the next job: %+v", j)
	}
}
