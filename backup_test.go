package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// runBackupCmd runs `recsys backup` in this process and returns its exit
// status, stdout and stderr.
func runBackupCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := runMain(context.Background(), append([]string{"backup"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// partials lists the temporary files a backup to path left beside it.
func partials(tb testing.TB, path string) []string {
	tb.Helper()
	names, err := filepath.Glob(path + ".partial-*")
	if err != nil {
		tb.Fatal(err)
	}
	return names
}

// ingestBatch is one acknowledged POST /interactions: a user of its own,
// events on distinct items, and when the 201 arrived.
type ingestBatch struct {
	user   string
	events int
	acked  time.Time
}

// TestBackup_underIngest backs up a bbolt server over real HTTP while
// four clients post events: every batch acknowledged before the backup
// began is in the copy whole, a batch acknowledged later is in it whole
// or not at all, and the copy opens with serve --db and serves. The
// applier runs every half second, so the newest acknowledged events are
// still in the event log's tail when the backup starts: a copy of the
// bbolt file alone would miss them.
func TestBackup_underIngest(t *testing.T) {
	a := startApp(t, nil)
	const clients, perBatch = 4, 25
	var (
		mu      sync.Mutex
		batches []ingestBatch
		stop    atomic.Bool
		wg      sync.WaitGroup
		failure atomic.Value
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for c := range clients {
		wg.Go(func() {
			for b := 0; !stop.Load(); b++ {
				user := fmt.Sprintf("c%d-b%d", c, b)
				evs := make([]string, perBatch)
				for k := range evs {
					evs[k] = fmt.Sprintf(`{"user_id":%q,"item_id":"i%d","type":"click"}`, user, (b*7+k)%300)
				}
				resp, err := client.Post(a.URL+"/interactions", "application/json",
					strings.NewReader(`{"interactions":[`+strings.Join(evs, ",")+`]}`))
				if err != nil {
					failure.Store(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					failure.Store(fmt.Errorf("POST /interactions: %d", resp.StatusCode))
					return
				}
				mu.Lock()
				batches = append(batches, ingestBatch{user: user, events: perBatch, acked: time.Now()})
				mu.Unlock()
			}
		})
	}
	time.Sleep(700 * time.Millisecond) // some applied, some in the tail
	path := filepath.Join(t.TempDir(), "backup.db")
	began := time.Now()
	code, out, errOut := runBackupCmd("--from", a.URL, "--to", path)
	time.Sleep(200 * time.Millisecond) // ingest goes on after the copy
	stop.Store(true)
	wg.Wait()
	if err, _ := failure.Load().(error); err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(out, "backed up "+a.URL+" to "+path) {
		t.Fatalf("backup: exit %d, out %q, err %q", code, out, errOut)
	}
	if p := partials(t, path); len(p) != 0 {
		t.Errorf("the backup left %v", p)
	}

	st, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	before, after, present := 0, 0, 0
	var inCopy int64
	for _, b := range batches {
		u, err := st.User(context.Background(), b.user)
		switch {
		case api.ErrorCode(err) == api.CodeNotFound:
			if b.acked.Before(began) {
				t.Errorf("batch of %s, acknowledged %v before the backup began, is not in it", b.user, began.Sub(b.acked))
			}
		case err != nil:
			t.Fatal(err)
		case u.Events != int64(b.events):
			t.Errorf("user %s has %d events in the copy, the batch had %d", b.user, u.Events, b.events)
		default:
			present++
			inCopy += u.Events
		}
		if b.acked.Before(began) {
			before++
		} else {
			after++
		}
	}
	c, err := st.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if c.Events != inCopy || c.Users != int64(present) {
		t.Errorf("the copy counts %d events of %d users; the batches found in it hold %d of %d", c.Events, c.Users, inCopy, present)
	}
	if before < 8 || after == 0 || present < before {
		t.Fatalf("%d batches acknowledged before the backup, %d after, %d in the copy: the test did not exercise a backup under ingest", before, after, present)
	}
	t.Logf("%d batches acknowledged before the backup began, %d after; %d in the copy (%s)", before, after, present, strings.TrimSpace(out))

	// The copy opens with serve --db (its own, empty event log) and serves.
	b := startApp(t, func(cfg *Config) { cfg.DB = path })
	var stats api.StatsOut
	if st := b.getJSON(t, "/stats", &stats); st != 200 || stats.Events != inCopy {
		t.Fatalf("GET /stats on the copy: %d %+v, want %d events", st, stats, inCopy)
	}
	if st := b.postJSON(t, "/interactions", map[string]any{"interactions": []map[string]string{{"user_id": "after-restore", "item_id": "i1"}}}, nil); st != 201 {
		t.Fatalf("POST /interactions on the copy: %d", st)
	}
	if st, body := b.do(t, http.MethodGet, "/users/"+batches[0].user+"/recommendations?n=3", "", nil); st != 200 {
		t.Fatalf("recommendations on the copy: %d %s", st, body)
	}
}

// cutProxy forwards GET /admin/backup to upstream and passes on the first
// limit bytes of the body; then, with stall, it holds the connection open
// (until the test ends), and otherwise it closes it.
func cutProxy(t *testing.T, upstream string, limit int64, stall bool) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(upstream + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for _, h := range []string{"Content-Length", "Content-Type"} {
			w.Header().Set(h, resp.Header.Get(h))
		}
		w.WriteHeader(resp.StatusCode)
		io.CopyN(w, resp.Body, limit)
		w.(http.Flusher).Flush()
		if stall {
			<-done
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(func() { close(done); p.Close() })
	return p
}

// fillServer gives a's store some data and returns the size of its file.
func fillServer(t *testing.T, a *testApp) int64 {
	t.Helper()
	if st := a.postJSON(t, "/interactions", rawJSON(contractEvents(60, 30, 8)), nil); st != 201 {
		t.Fatalf("POST /interactions: %d", st)
	}
	return a.store.Size()
}

// TestBackup_cutStream: a backup whose stream breaks half-way leaves no
// file at --to and no temporary file, and says how far it got; a stream
// whole in length but not a bbolt file (both meta pages zeroed) is refused
// the same way.
func TestBackup_cutStream(t *testing.T) {
	a := startApp(t, nil)
	size := fillServer(t, a)
	path := filepath.Join(t.TempDir(), "cut.db")
	p := cutProxy(t, a.URL, size/2, false)
	code, _, errOut := runBackupCmd("--from", p.URL, "--to", path)
	if code != 1 || !strings.Contains(errOut, "broke after") && !strings.Contains(errOut, "ended after") {
		t.Fatalf("cut stream: exit %d, stderr %q; want a failure saying where it stopped", code, errOut)
	}
	if !strings.Contains(errOut, "no file was written at "+path) {
		t.Errorf("stderr %q does not say that nothing was written", errOut)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cut backup left %s (%v)", path, err)
	}
	if p := partials(t, path); len(p) != 0 {
		t.Errorf("a cut backup left %v", p)
	}

	zeroed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(a.URL + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		clear(body[:2*os.Getpagesize()])
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer zeroed.Close()
	code, _, errOut = runBackupCmd("--from", zeroed.URL, "--to", path)
	if code != 1 || !strings.Contains(errOut, "not a whole bbolt file") {
		t.Fatalf("zeroed meta pages: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || len(partials(t, path)) != 0 {
		t.Errorf("a refused backup left files: %v %v", err, partials(t, path))
	}
}

// TestBackup_killed kills `recsys backup` (SIGKILL) half-way through the
// stream: no file appears at --to, only its .partial-* temporary file,
// and the next backup to the same file removes that and succeeds.
func TestBackup_killed(t *testing.T) {
	if os.Getenv("RECSYS_BACKUP_HELPER") != "" {
		t.Skip("the helper process runs TestBackup_helperProcess only")
	}
	a := startApp(t, nil)
	size := fillServer(t, a)
	path := filepath.Join(t.TempDir(), "killed.db")
	p := cutProxy(t, a.URL, size/2, true)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBackup_helperProcess$")
	cmd.Env = append(os.Environ(), "RECSYS_BACKUP_HELPER=1", "RECSYS_BACKUP_FROM="+p.URL, "RECSYS_BACKUP_TO="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if names := partials(t, path); len(names) == 1 {
			if fi, err := os.Stat(names[0]); err == nil && fi.Size() >= size/2 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the backup never received half the stream: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a killed backup left %s (%v)", path, err)
	}
	left := partials(t, path)
	if len(left) != 1 {
		t.Fatalf("a killed backup left %v, want its one temporary file", left)
	}

	code, outText, errOut := runBackupCmd("--from", a.URL, "--to", path)
	if code != 0 {
		t.Fatalf("the backup after the kill: exit %d, %s %s", code, outText, errOut)
	}
	if p := partials(t, path); len(p) != 0 {
		t.Errorf("the next backup left %v (the killed one's was %v)", p, left)
	}
	st, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if c, want := mustStoreCounts(t, st), mustStoreCounts(t, a.store); c != want {
		t.Errorf("the backup counts %+v, the server %+v", c, want)
	}
}

// TestBackup_helperProcess is the process TestBackup_killed kills.
func TestBackup_helperProcess(t *testing.T) {
	if os.Getenv("RECSYS_BACKUP_HELPER") == "" {
		t.Skip("run by TestBackup_killed")
	}
	code, out, errOut := runBackupCmd("--from", os.Getenv("RECSYS_BACKUP_FROM"), "--to", os.Getenv("RECSYS_BACKUP_TO"))
	t.Fatalf("the backup returned (exit %d, %s %s); it should have been killed", code, out, errOut)
}

// slowReader hands out at most chunk bytes a read, pausing before each.
type slowReader struct {
	r     io.Reader
	chunk int
	pause time.Duration
}

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.pause)
	return s.r.Read(p[:min(len(p), s.chunk)])
}

// TestBackup_outlastsWriteTimeout reads a backup more slowly than the
// server's write timeout allows for a whole answer (2 s here, for a file
// of some 40 MiB read at under 10 MiB/s through a small socket buffer):
// the route moves its write deadline on as the copy goes, so the copy
// arrives whole.
func TestBackup_outlastsWriteTimeout(t *testing.T) {
	a := startApp(t, func(c *Config) {
		c.Limits.RequestTimeout = time.Second
		c.Server.Write = 2 * time.Second
	})
	if got := a.srv.WriteTimeout; got != 2*time.Second {
		t.Fatalf("the server's write timeout is %v, want 2s", got)
	}
	fillServer(t, a)
	blob := make([]byte, 40<<20)
	for k := range blob {
		blob[k] = byte(k * 7)
	}
	v, err := a.store.NewModelVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.store.PutModel(context.Background(), api.ModelInfo{Name: "bulky", Version: v}, blob); err != nil {
		t.Fatal(err)
	}
	// A small receive buffer keeps the kernel from taking the whole copy
	// off the server while the reader sleeps.
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			err = c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}}
	resp, err := client.Get(a.URL + "/admin/backup")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /admin/backup: %s", resp.Status)
	}
	start := time.Now()
	path := filepath.Join(t.TempDir(), "slow.db")
	info, err := storage.ReceiveBackup(slowReader{r: resp.Body, chunk: 32 << 10, pause: 3 * time.Millisecond}, resp.ContentLength, path, false)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("a backup read over %v: %v", took, err)
	}
	if took < 3*time.Second {
		t.Fatalf("the copy arrived in %v: too fast to outlast the 2 s write timeout", took)
	}
	st, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.ModelBlob(context.Background(), "bulky", v)
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("the copy's model blob: %d bytes, %v; want the 40 MiB stored", len(got), err)
	}
	t.Logf("%.1f MiB in %v", float64(info.Bytes)/(1<<20), took)
}

// TestBackup_refusals: the command refuses, writing nothing, a --to that
// exists (unless --force, which replaces it), a --to with an event log
// beside it, a wrong admin key (the server's 403 message), a server on
// PostgreSQL (its 501, naming pg_dump), a PostgreSQL URL as --from, and
// missing flags.
func TestBackup_refusals(t *testing.T) {
	const adminKey = "admin-key-for-backups-1"
	a := startApp(t, func(c *Config) { c.AdminKey = adminKey })
	if _, err := a.store.AddInteractions(context.Background(), []api.Interaction{{UserID: "u1", ItemID: "i1", Type: "view"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(exists, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.db")
	if err := os.Mkdir(live+".events", 0o700); err != nil {
		t.Fatal(err)
	}
	pg := startApp(t, func(c *Config) { c.DB = pgtest.Schema(t) })
	for _, c := range []struct {
		name string
		env  string // RECSYS_ADMIN_KEY
		args []string
		want string
	}{
		{"exists", adminKey, []string{"--from", a.URL, "--to", exists}, "exists: choose another file, or pass --force"},
		{"event log beside", adminKey, []string{"--from", a.URL, "--to", live}, "live.db.events holds the event log"},
		{"wrong key", "not-the-admin-key-9", []string{"--from", a.URL, "--to", filepath.Join(dir, "w.db")}, "403 Forbidden"},
		{"no key", "", []string{"--from", a.URL, "--to", filepath.Join(dir, "n.db")}, "401 Unauthorized"},
		{"postgres server", "", []string{"--from", pg.URL, "--to", filepath.Join(dir, "pg.db")}, "501 Not Implemented: this server stores its data in PostgreSQL"},
		{"postgres URL", "", []string{"--from", "postgres://u@127.0.0.1/db", "--to", filepath.Join(dir, "u.db")}, "pg_dump -Fc"},
		{"no --to", "", []string{"--from", a.URL}, "needs --from http://HOST:PORT and --to FILE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("RECSYS_ADMIN_KEY", c.env)
			code, out, errOut := runBackupCmd(c.args...)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, out %q, stderr %q; want 1 and %q", code, out, errOut, c.want)
			}
			if to := c.args[len(c.args)-1]; strings.HasSuffix(to, ".db") && to != exists {
				if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("left %s behind", to)
				}
			}
		})
	}
	if b, err := os.ReadFile(exists); err != nil || string(b) != "keep me" {
		t.Fatalf("a refused backup changed %s: %q %v", exists, b, err)
	}

	t.Setenv("RECSYS_ADMIN_KEY", adminKey)
	if code, out, errOut := runBackupCmd("--from", strings.TrimPrefix(a.URL, "http://"), "--to", exists, "--force"); code != 0 {
		t.Fatalf("--force: exit %d, %s %s", code, out, errOut)
	}
	st, err := storage.Open(exists, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the replaced file does not open: %v", err)
	}
	defer st.Close()
	if got, want := mustStoreCounts(t, st), mustStoreCounts(t, a.store); got != want || want.Events == 0 {
		t.Errorf("the replaced file counts %+v, the server %+v", got, want)
	}
}
