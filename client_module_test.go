package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/recsys-engine/recsys/api"
)

// shopProgram is the program another module would write with the client:
// it sends a shop's purchases, trains itemknn and waits for the job, then
// prints alice's recommendations, the items similar to the espresso
// machine and a rerank of candidates for alice, as JSON. {{.Module}} is
// this repository's module path.
var shopProgram = template.Must(template.New("main.go").Parse(`package main

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"time"

	"{{.Module}}/api"
	"{{.Module}}/api/client"
)

func main() {
	ctx := context.Background()
	c := client.New(os.Getenv("RECSYS_URL"), client.WithKey(os.Getenv("RECSYS_ADMIN_KEY")))

	purchases := map[string][]string{
		"alice": {"espresso-machine", "coffee-grinder", "milk-frother"},
		"bob":   {"espresso-machine", "coffee-grinder", "tamper", "milk-frother"},
		"carol": {"french-press", "coffee-grinder", "kettle"},
		"dave":  {"french-press", "kettle", "tea-infuser"},
		"erin":  {"espresso-machine", "tamper", "knock-box"},
		"judy":  {"espresso-machine", "milk-frother", "mug-set"},
	}
	var evs []api.InteractionIn
	for user, items := range purchases {
		for _, item := range items {
			evs = append(evs, api.InteractionIn{UserID: user, ItemID: item, Type: "purchase"})
		}
	}
	if _, err := c.AddInteractions(ctx, evs); err != nil {
		log.Fatal(err)
	}

	acc, err := c.Retrain(ctx, api.RetrainIn{Models: []string{"itemknn"}})
	if err != nil {
		log.Fatal(err)
	}
	for {
		j, err := c.Job(ctx, acc.JobID)
		if err != nil {
			log.Fatal(err)
		}
		if j.Done() {
			if j.State != api.JobSucceeded {
				log.Fatalf("training %s: %s", j.State, j.Error)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	recs, err := c.Recommend(ctx, "alice", client.RecommendOptions{N: 3})
	if err != nil {
		log.Fatal(err)
	}
	sim, err := c.Similar(ctx, "espresso-machine", client.SimilarOptions{N: 3})
	if err != nil {
		log.Fatal(err)
	}
	rr, err := c.Rerank(ctx, "alice", []string{"kettle", "tamper", "gift-card", "knock-box"}, "")
	if err != nil {
		log.Fatal(err)
	}
	ids := func(items []api.ScoredItem) []string {
		out := []string{}
		for _, it := range items {
			out = append(out, it.ItemID)
		}
		return out
	}
	err = json.NewEncoder(os.Stdout).Encode(map[string][]string{
		"recommendations": ids(recs.Items),
		"similar":         ids(sim.Items),
		"rerank":          ids(rr.Items),
	})
	if err != nil {
		log.Fatal(err)
	}
}
`))

// modulePath reads the module line of go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}

// goTool is the go command running the tests.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatal("the go command is needed to build a program of another module: ", err)
	}
	return p
}

// offlineGo runs the go command in dir with no network: modules come from
// the module cache (which this repository's build filled) or a replace
// directive, and no workspace or other toolchain takes part.
func offlineGo(t *testing.T, dir string, env []string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local",
		"GOPRIVATE=", "GONOPROXY=", "GONOSUMDB=")
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, err
}

// TestClientModule_goGet: the go command accepts this module's path as
// one it could fetch, so that another module can go get the client. It
// refuses a path whose first element has no dot before any lookup
// ("malformed module path ... missing dot in first path element"): such a
// module is usable only through a replace directive to a copy on disk.
// Offline, the lookup itself fails, and that is the only failure allowed.
func TestClientModule_goGet(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/shop\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := offlineGo(t, dir, nil, "get", modulePath(t)+"/api/client")
	if err != nil && !strings.Contains(err.Error(), "module lookup disabled by GOPROXY=off") {
		t.Fatalf("another module cannot go get the client: %v", err)
	}
}

// TestClientModule_program builds a program in a module of its own that
// requires this one (through a replace directive to this checkout) and
// uses the client against a live server, and checks what it prints
// against what the server answers directly.
func TestClientModule_program(t *testing.T) {
	a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = testAppKey, testAdminKey })
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	mod := modulePath(t)
	dir := t.TempDir()
	var src bytes.Buffer
	if err := shopProgram.Execute(&src, struct{ Module string }{mod}); err != nil {
		t.Fatal(err)
	}
	gomod := fmt.Sprintf("module example.com/shop\n\ngo 1.26\n\nrequire %s v0.0.0-00010101000000-000000000000\n\nreplace %[1]s => %s\n", mod, root)
	sum, err := os.ReadFile("go.sum") // the sums of this module's requirements
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"main.go": src.Bytes(), "go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := offlineGo(t, dir, []string{"RECSYS_URL=" + a.URL, "RECSYS_ADMIN_KEY=" + testAdminKey}, "run", ".")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string][]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the program printed %q: %v", out, err)
	}

	// The same questions, asked of the server without the client.
	auth := []string{"Authorization", "Bearer " + testAdminKey}
	ask := func(method, path, body string, out any) {
		t.Helper()
		status, b := a.do(t, method, path, "application/json", []byte(body), auth...)
		if status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	ids := func(items []api.ScoredItem) []string {
		out := []string{}
		for _, it := range items {
			out = append(out, it.ItemID)
		}
		return out
	}
	var recs, rr api.RecommendationsOut
	var sim api.SimilarOut
	var u api.UserOut
	ask(http.MethodGet, "/users/alice/recommendations?n=3", "", &recs)
	ask(http.MethodGet, "/items/espresso-machine/similar?n=3", "", &sim)
	ask(http.MethodPost, "/users/alice/rerank", `{"items":["kettle","tamper","gift-card","knock-box"]}`, &rr)
	ask(http.MethodGet, "/users/alice", "", &u)
	if u.Items != 3 || recs.Model != "itemknn" {
		t.Fatalf("the server holds %d items for alice and recommends by %q, want the program's 3 purchases and its itemknn", u.Items, recs.Model)
	}
	want := map[string][]string{"recommendations": ids(recs.Items), "similar": ids(sim.Items), "rerank": ids(rr.Items)}
	for k, w := range want {
		if len(w) < 3 || !slices.Equal(got[k], w) {
			t.Errorf("the program's %s: %q, the server's %q (at least 3 wanted)", k, got[k], w)
		}
	}
}
