package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/storage/bolttest"
)

// buildBinary compiles this program once per test binary run.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "recsys-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "recsys")
	goTool, err := exec.LookPath("go") // the go command running this test is on PATH in CI
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// execCommand runs the binary to completion and returns its output.
func execCommand(bin string, args ...string) ([]byte, error) {
	return exec.Command(bin, args...).CombinedOutput()
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// testBinary skips tb under -short; otherwise it builds this program (once)
// and returns the path of the binary.
func testBinary(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds and runs the binary")
	}
	bin, err := buildBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// startBinary runs `recsys serve` on db and waits until it answers. Its
// triggers fit --models alone (--auto=false), as none of its callers is
// about auto mode: an extra flag --auto turns it back on.
func startBinary(tb testing.TB, db string, extra ...string) (*exec.Cmd, string) {
	tb.Helper()
	bin := testBinary(tb)
	addr := freeAddr(tb)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--db", db, "--auto=false"}, extra...)...)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			return cmd, url
		}
		if time.Now().After(deadline) {
			tb.Fatalf("server did not start: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDurability_sigkillDuringIngest posts batches from several clients,
// kills the server with SIGKILL at a random moment, restarts it, and
// checks that every batch answered 201 is there in full.
func TestDurability_sigkillDuringIngest(t *testing.T) {
	db := filepath.Join(t.TempDir(), "durable.db")
	cmd, url := startBinary(t, db)
	const perBatch = 200
	run := postBatches(url, perBatch, func(w, k int) string { return fmt.Sprintf("w%d-b%d", w, k) },
		func(_, j int) string { return fmt.Sprintf("item-%d", j) })
	time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	acked, _ := run()
	client := &http.Client{Timeout: 10 * time.Second}
	if len(acked) == 0 {
		t.Fatal("no batch was acknowledged before the kill; the test proves nothing")
	}

	_, url = startBinary(t, db)
	for _, user := range acked {
		resp, err := client.Get(url + "/users/" + user)
		if err != nil {
			t.Fatal(err)
		}
		var u struct{ Items int64 }
		err = json.NewDecoder(resp.Body).Decode(&u)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil || u.Items != perBatch {
			t.Fatalf("acknowledged batch %s: status %d, %d items (want %d), err %v", user, resp.StatusCode, u.Items, perBatch, err)
		}
	}
	t.Logf("%d acknowledged batches of %d events survived SIGKILL", len(acked), perBatch)
}

// TestDurability_sigkillDuringApply kills the server three times while
// clients post 1,000-event batches, so that the kills land with events in
// the log that the applier has not folded into the database yet, or while
// it is folding them. After each kill bbolt's check finds the file whole;
// after each restart every acknowledged batch is there in full, no batch
// is there in part (acknowledged or not: a batch is one log record), and
// the events counter equals the sum of the users' events.
func TestDurability_sigkillDuringApply(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	db := filepath.Join(t.TempDir(), "apply.db")
	const perBatch = 1000
	var acked, sent []string
	tails := 0
	for round := range 3 {
		cmd, url := startBinary(t, db)
		run := postBatches(url, perBatch, func(w, k int) string { return fmt.Sprintf("r%d-w%d-b%d", round, w, k) },
			func(k, j int) string { return fmt.Sprintf("item-%d", (j*7+k)%1500) })
		time.Sleep(time.Duration(600+rand.IntN(900)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		_ = cmd.Wait()
		a, s := run()
		acked, sent = append(acked, a...), append(sent, s...)
		// Before anything opens the file: the next start must read the
		// free-page list, not walk the file to rebuild it.
		if !bolttest.FreelistSynced(t, db) {
			t.Fatalf("round %d: the file the kill left has no free-page list", round)
		}
		checkDB(t, db)
		if applied, logged := logState(t, db); applied < logged {
			tails++
			t.Logf("round %d: killed with %d bytes of the event log unapplied", round, logged-applied)
		}
	}
	if len(acked) == 0 {
		t.Fatal("no batch was acknowledged before the kills; the test proves nothing")
	}
	if tails == 0 {
		t.Fatal("every kill found the event log fully applied: the replay was not exercised")
	}

	_, url := startBinary(t, db)
	get := httpGetter(t, url)
	isAcked := map[string]bool{}
	for _, u := range acked {
		isAcked[u] = true
	}
	total := int64(0)
	for _, user := range sent {
		var u struct{ Events int64 }
		status := get("/users/"+user, &u)
		switch {
		case status == http.StatusOK && u.Events == perBatch:
			total += u.Events
		case status == http.StatusNotFound && !isAcked[user]:
		default:
			t.Fatalf("batch %s (acknowledged %v): status %d, %d events, want all %d or (unacknowledged) none", user, isAcked[user], status, u.Events, perBatch)
		}
	}
	var stats struct{ Events int64 }
	if status := get("/stats", &stats); status != http.StatusOK || stats.Events != total {
		t.Fatalf("/stats: %d, %d events counted, %d in the users' records", status, stats.Events, total)
	}
	t.Logf("%d batches of %d events acknowledged over 3 kills, %d stored", len(acked), perBatch, total/perBatch)
}

// logState reads, with the server down, the event log position the
// database has applied and the end of the log on disk.
func logState(tb testing.TB, db string) (applied, logged int64) {
	tb.Helper()
	bdb, err := bolt.Open(db, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	_ = bdb.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket([]byte("meta")).Get([]byte("log/applied")); len(v) == 8 {
			applied = int64(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	bdb.Close()
	segs, _ := filepath.Glob(db + ".events/*.seg")
	for _, seg := range segs {
		var base int64
		fmt.Sscanf(filepath.Base(seg), "%020d.seg", &base)
		if fi, err := os.Stat(seg); err == nil && base+fi.Size() > logged {
			logged = base + fi.Size()
		}
	}
	return applied, logged
}

// postBatches starts 4 clients posting batches of perBatch view events to
// url until the server dies: batch k of client w is user(w, k)'s, with the
// items item(k, j). The returned function stops them and gives the users
// of the batches answered 201 and of all batches sent.
func postBatches(url string, perBatch int, user func(w, k int) string, item func(k, j int) string) func() (acked, sent []string) {
	var (
		acked, sent []string
		mu          sync.Mutex
		wg          sync.WaitGroup
		stop        = make(chan struct{})
	)
	client := &http.Client{Timeout: 20 * time.Second}
	for w := 0; w < 4; w++ {
		wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				u := user(w, k)
				evs := make([]map[string]any, perBatch)
				for j := range evs {
					evs[j] = map[string]any{"user_id": u, "item_id": item(k, j), "type": "view"}
				}
				body, _ := json.Marshal(map[string]any{"interactions": evs})
				mu.Lock()
				sent = append(sent, u)
				mu.Unlock()
				resp, err := client.Post(url+"/interactions", "application/json", bytes.NewReader(body))
				if err != nil {
					return // the server died
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusCreated {
					mu.Lock()
					acked = append(acked, u)
					mu.Unlock()
				}
			}
		})
	}
	return func() ([]string, []string) {
		close(stop)
		wg.Wait()
		return acked, sent
	}
}
