package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
)

// postBatch posts perBatch events of one new user and returns the status
// and the decoded error (if any).
func postBatch(tb testing.TB, url, user string, perBatch int) (int, api.ErrorOut) {
	tb.Helper()
	evs := make([]map[string]any, perBatch)
	for j := range evs {
		evs[j] = map[string]any{"user_id": user, "item_id": fmt.Sprintf("item-%d", j), "type": "view"}
	}
	body, _ := json.Marshal(map[string]any{"interactions": evs})
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Post(url+"/interactions", "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("posting %s: %v", user, err)
	}
	defer resp.Body.Close()
	var out api.ErrorOut
	if resp.StatusCode >= 300 {
		_ = json.NewDecoder(resp.Body).Decode(&out)
	}
	return resp.StatusCode, out
}

// checkDB runs bbolt's consistency check over the whole file.
func checkDB(tb testing.TB, path string) {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		tb.Fatalf("reopening %s: %v", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("the database is corrupt: %v", err)
	}
}

// TestFault_diskFull runs the real binary and takes the disk away under it:
// the process's file size limit (RLIMIT_FSIZE, set from outside with
// prlimit) is lowered to the database's current size, so the file cannot
// grow, as on a full disk. Writes then answer 507 storage_unwritable while
// reads keep working; once the limit is lifted, writes succeed again without
// a restart; after a clean shutdown bbolt's check finds no damage, every
// batch answered 201 is there in full and no refused batch left a trace.
func TestFault_diskFull(t *testing.T) {
	db := filepath.Join(t.TempDir(), "full.db")
	cmd, url := startBinary(t, db)
	// A file that may not grow still holds the free space bbolt added when
	// it last grew (up to 16 MiB): batches of 1,000 events fill it well
	// within the 300 posted below.
	const perBatch = 1000
	var acked, refused []string
	post := func(user string) (int, api.ErrorOut) {
		status, out := postBatch(t, url, user, perBatch)
		switch status {
		case http.StatusCreated:
			acked = append(acked, user)
		case http.StatusInsufficientStorage:
			refused = append(refused, user)
		default:
			t.Fatalf("batch %s: status %d %+v", user, status, out.Error)
		}
		return status, out
	}
	for k := range 3 {
		if status, _ := post(fmt.Sprintf("warm-%d", k)); status != http.StatusCreated {
			t.Fatalf("warm-up batch: %d", status)
		}
	}

	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, nil, &old); err != nil {
		t.Fatal(err)
	}
	full := unix.Rlimit{Cur: uint64(fi.Size()), Max: old.Max}
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &full, nil); err != nil {
		t.Fatalf("lowering the server's file size limit: %v", err)
	}
	var first api.ErrorOut
	for k := 0; len(refused) == 0; k++ {
		if k == 300 {
			t.Fatalf("300 batches fit in a file that may not grow past %d bytes", fi.Size())
		}
		if status, out := post(fmt.Sprintf("b-%d", k)); status == http.StatusInsufficientStorage {
			first = out
		}
	}
	if first.Error.Code != api.CodeStorageFull || !strings.Contains(first.Error.Message, "file size limit") ||
		!strings.Contains(first.Error.Message, "nothing of this request was stored") {
		t.Fatalf("a write on a full disk answered %+v, want storage_unwritable naming the cause", first.Error)
	}
	// The process is alive and still serves reads.
	var u api.UserOut
	if status := httpGetter(t, url)("/users/"+acked[0], &u); status != http.StatusOK || u.Events != perBatch {
		t.Fatalf("read while the disk is full: %d %+v", status, u)
	}
	for k := range 3 {
		post(fmt.Sprintf("full-%d", k))
	}

	// Space returns: writes succeed again, without a restart.
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &old, nil); err != nil {
		t.Fatal(err)
	}
	if status, out := post("after-space-returns"); status != http.StatusCreated {
		t.Fatalf("a write after space returned: %d %+v", status, out.Error)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the server did not shut down cleanly after the disk filled: %v", err)
	}
	checkDB(t, db)
	st, err := storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, user := range acked {
		if got, err := st.User(context.Background(), user); err != nil || got.Events != perBatch {
			t.Fatalf("acknowledged batch %s: %+v, %v", user, got, err)
		}
	}
	for _, user := range refused {
		if _, err := st.User(context.Background(), user); api.ErrorCode(err) != api.CodeNotFound {
			t.Fatalf("refused batch %s left a trace: %v", user, err)
		}
	}
	c, err := st.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Events != int64(len(acked)*perBatch) {
		t.Fatalf("%d events stored, want %d from %d acknowledged batches", c.Events, len(acked)*perBatch, len(acked))
	}
	t.Logf("%d batches acknowledged, %d refused with 507", len(acked), len(refused))
}

// TestFault_readOnlyDatabase starts the real binary on a database file it
// may read but not write: it exits at once with status 1 and a message that
// names the file and says it is not writable, and leaves the file as it was.
func TestFault_readOnlyDatabase(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ro.db")
	st, err := storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddInteractions(context.Background(), []api.Interaction{{UserID: "u", ItemID: "i", Type: "view"}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", freeAddr(t), "--db", db)
	if os.Geteuid() == 0 {
		// Root writes through file modes; run the server as nobody, from
		// a copy of the binary it may execute.
		exe := filepath.Join(dir, "recsys")
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, b, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Path = exe
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the server kept running on a read-only database\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
	}
	msg := stderr.String()
	if !strings.Contains(msg, db) || !strings.Contains(msg, "not writable") || strings.Contains(msg, "panic") {
		t.Fatalf("unclear message for a read-only database:\n%s", msg)
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the refused start changed the database file")
	}
	t.Logf("message: %s", strings.TrimSpace(msg))
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// trainedTwice starts a server on a new database file, loads clustered
// events and trains the models twice, so each has two versions; start
// starts another server on the file, logging to logs.
func trainedTwice(t *testing.T, models ...string) (db string, start func(logs io.Writer) *testApp, a *testApp) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "models.db")
	start = func(logs io.Writer) *testApp {
		return startApp(t, func(c *Config) {
			c.DB = db
			c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		})
	}
	a = start(io.Discard)
	a.load(t, clustered(300, 200, 20, 3, 4))
	for range 2 {
		if j := waitJob(t, a.getter(t), a.retrain(t, models...), time.Minute, api.Job.Done); j.State != api.JobSucceeded {
			t.Fatalf("training: %+v", j)
		}
	}
	return db, start, a
}

// versions lists the stored versions of a model, newest first; there must
// be two.
func (a *testApp) versions(t *testing.T, name string) []string {
	t.Helper()
	var models api.ModelsOut
	a.getJSON(t, "/models", &models)
	var out []string
	for _, m := range models.Models {
		if m.Name == name {
			out = append(out, m.Version)
		}
	}
	if len(out) != 2 {
		t.Fatalf("%s versions: %v", name, out)
	}
	return out
}

// TestFault_corruptLaterModel: a server answers once its active model is
// loaded and loads the others after it. A damaged newest version of one of
// those is logged and counted when its load gets to it, and its previous
// version answers ?model= from then on; recsys_models_loading falls to 0.
func TestFault_corruptLaterModel(t *testing.T) {
	db, start, a := trainedTwice(t, "itemknn", "userknn")
	if status, body := a.do(t, http.MethodPost, "/admin/models/itemknn/activate", "", nil); status != http.StatusOK {
		t.Fatalf("activating itemknn: %d %s", status, body)
	}
	versions := a.versions(t, "userknn")
	a.stopNow(t)

	corruptModel(t, db, "userknn", versions[0])
	var logs syncBuffer
	b := start(&logs)
	if got := b.recommend(t, "u2"); got.Model != "itemknn" || got.Fallback != "" {
		t.Fatalf("at the start: %+v, want the active itemknn", got)
	}
	for deadline := time.Now().Add(30 * time.Second); metricValue(t, b, "recsys_models_loading") != "0"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recsys_models_loading = %s after 30 s", metricValue(t, b, "recsys_models_loading"))
		}
	}
	if v := metricValue(t, b, "recsys_model_load_errors"); v != "1" {
		t.Fatalf("recsys_model_load_errors = %s, want 1", v)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, versions[0]) {
		t.Fatalf("no error log line names the damaged version:\n%s", l)
	}
	var got api.RecommendationsOut
	if status := b.getJSON(t, "/users/u2/recommendations?n=10&model=userknn", &got); status != http.StatusOK || got.ModelVersion != versions[1] {
		t.Fatalf("?model=userknn: %d %+v, want the previous version %s", status, got, versions[1])
	}
	b.stopNow(t)
	checkDB(t, db)
}

// corruptModel flips bytes in the middle of a stored model blob with bbolt
// directly, as a damaged disk would, while no server has the file open.
func corruptModel(tb testing.TB, path, name, version string) {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("models"))
		key := []byte(name + "\x00" + version)
		v := b.Get(key)
		if len(v) < 64 {
			return fmt.Errorf("model %s %s: %d bytes stored", name, version, len(v))
		}
		bad := append([]byte(nil), v...)
		for k := len(bad) / 2; k < len(bad)/2+3; k++ {
			bad[k] ^= 0x5a
		}
		return b.Put(key, bad)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func metricValue(tb testing.TB, a *testApp, name string) string {
	tb.Helper()
	_, body := a.do(tb, http.MethodGet, "/metrics", "", nil)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	tb.Fatalf("metric %s not exported", name)
	return ""
}

// TestFault_corruptModel damages persisted model records on disk between
// runs. With the newest version damaged the service starts and serves the
// previous good version; with every version damaged it starts and serves
// the popularity fallback. Each time it reports the damage: an error log
// line naming the version, the recsys_model_load_errors metric, and (with
// no model left) /readyz naming the failure. A retrain then recovers.
func TestFault_corruptModel(t *testing.T) {
	db, start, a := trainedTwice(t, "itemknn")
	versions := a.versions(t, "itemknn")
	if got := a.recommend(t, "u2"); got.ModelVersion != versions[0] {
		t.Fatalf("serving %s, want the newest %s", got.ModelVersion, versions[0])
	}
	a.stopNow(t)

	// The newest version is damaged: the previous one serves.
	corruptModel(t, db, "itemknn", versions[0])
	var logs syncBuffer
	b := start(&logs)
	got := b.recommend(t, "u2")
	if got.Model != "itemknn" || got.ModelVersion != versions[1] || got.Fallback != "" {
		t.Fatalf("with %s damaged: %+v, want itemknn %s", versions[0], got, versions[1])
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, versions[0]) || !strings.Contains(l, "corrupt") {
		t.Fatalf("no error log line names the damaged version:\n%s", l)
	}
	if v := metricValue(t, b, "recsys_model_load_errors"); v != "1" {
		t.Fatalf("recsys_model_load_errors = %s, want 1", v)
	}
	if status, body := b.do(t, http.MethodGet, "/readyz", "", nil); status != http.StatusOK {
		t.Fatalf("readyz with a good version serving: %d %s", status, body)
	}
	b.stopNow(t)

	// Every version is damaged: the service starts on popularity.
	corruptModel(t, db, "itemknn", versions[1])
	c := start(io.Discard)
	got = c.recommend(t, "u2")
	if got.Fallback == "" || len(got.Items) == 0 {
		t.Fatalf("with every version damaged: %+v, want the popularity fallback", got)
	}
	status, body := c.do(t, http.MethodGet, "/readyz", "", nil)
	var out api.ErrorOut
	_ = json.Unmarshal(body, &out)
	if status != http.StatusServiceUnavailable || out.Error.Code != api.CodeModelNotReady ||
		!strings.Contains(out.Error.Message, "could not be loaded") || !strings.Contains(out.Error.Message, "corrupt") {
		t.Fatalf("readyz with no loadable model: %d %s", status, body)
	}
	if v := metricValue(t, c, "recsys_model_load_errors"); v == "0" || v == "1" {
		t.Fatalf("recsys_model_load_errors = %s, want one per damaged version and the active model", v)
	}
	var listed api.ModelsOut
	if status := c.getJSON(t, "/models", &listed); status != http.StatusOK || len(listed.Models) != 2 {
		t.Fatalf("GET /models with damaged blobs: %d %+v", status, listed)
	}
	// A retrain recovers.
	if j := waitJob(t, c.getter(t), c.retrain(t, "itemknn"), time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("retraining: %+v", j)
	}
	if got := c.recommend(t, "u2"); got.Fallback != "" || got.Model != "itemknn" {
		t.Fatalf("after the retrain: %+v", got)
	}
	c.stopNow(t)
	checkDB(t, db)
}
