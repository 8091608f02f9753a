package main

import (
	"bytes"
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

// startBinary runs `recsys serve` on db and waits until it answers.
func startBinary(tb testing.TB, db string, extra ...string) (*exec.Cmd, string) {
	tb.Helper()
	bin := testBinary(tb)
	addr := freeAddr(tb)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--db", db}, extra...)...)
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
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		stop  = make(chan struct{})
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				user := fmt.Sprintf("w%d-b%d", w, k)
				evs := make([]map[string]any, perBatch)
				for j := range evs {
					evs[j] = map[string]any{"user_id": user, "item_id": fmt.Sprintf("item-%d", j), "type": "view"}
				}
				body, _ := json.Marshal(map[string]any{"interactions": evs})
				resp, err := client.Post(url+"/interactions", "application/json", bytes.NewReader(body))
				if err != nil {
					return // the server died
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusCreated {
					mu.Lock()
					acked = append(acked, user)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(stop)
	wg.Wait()
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
