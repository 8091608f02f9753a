package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// The dashboard test drives the embedded dashboard (web/) in headless
// Chromium against a live App holding MovieLens 100K: it enters the admin
// key, retrains and evaluates from the page, opens recommendations, an
// evaluation chart and every page at desktop and phone width, and saves
// the screenshots of the README to docs/screenshots/. It fails on any
// console error, uncaught exception or failed request other than those it
// provokes on purpose.

const dashAdminKey = "dashboard-test-admin-key"

// findChromium returns the browser to drive, or ends the test: a missing
// browser fails it unless RECSYS_SKIP_BROWSER=1.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RECSYS_SKIP_BROWSER") == "1" {
		t.Skip("chromium is not installed and RECSYS_SKIP_BROWSER=1")
	}
	t.Fatal("the dashboard test needs Chromium, and none is on PATH: install it (Debian: apt-get install -y chromium), or set RECSYS_SKIP_BROWSER=1 to skip this test")
	return ""
}

// dashboardData loads MovieLens 100K from ../shared/datasets/ml-100k, or a
// generated catalogue when that folder is missing. It returns a user and an
// item to explore.
func dashboardData(t *testing.T, a *testApp) (user, item string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join("..", "shared", "datasets", "ml-100k")
	if _, err := os.Stat(dir); err == nil {
		if _, err := importItems(ctx, a.store, itemSource{format: "movielens", path: dir}); err != nil {
			t.Fatal(err)
		}
		if _, err := importEvents(ctx, a.store, "movielens", dir, newProgress(io.Discard, -1, "")); err != nil {
			t.Fatal(err)
		}
		return "1", "50"
	}
	t.Logf("%s is missing: the dashboard test uses a generated dataset", dir)
	return generatedDashboardData(t, a)
}

// generatedDashboardData stores 300 items in four genres (item iN is in
// genre N%4: action, comedy, drama, sci-fi; titled "Title N") and 400
// users who mostly view the items of their cluster (user uK: cluster
// K%4). It returns a user and an item to explore.
func generatedDashboardData(t *testing.T, a *testApp) (user, item string) {
	t.Helper()
	ctx := context.Background()
	const users, items, clusters = 400, 300, 4
	genres := []string{"action", "comedy", "drama", "sci-fi"}
	rng := rand.New(rand.NewPCG(7, 7))
	var catalogue []api.Item
	for i := 0; i < items; i++ {
		f := map[string]float64{}
		for k, g := range genres {
			f[g] = 0
			if k == i%clusters || rng.Float64() < 0.1 {
				f[g] = 1
			}
		}
		catalogue = append(catalogue, api.Item{ID: fmt.Sprintf("i%d", i), Features: f,
			Categories: []string{genres[i%clusters]}, Labels: map[string]string{"title": fmt.Sprintf("Title %d", i)}})
	}
	if err := a.store.PutItems(ctx, catalogue); err != nil {
		t.Fatal(err)
	}
	evs := clustered(users, items, 30, clusters, 8)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for k := range evs {
		evs[k].Timestamp = start.Add(time.Duration(k) * 90 * time.Second)
	}
	a.load(t, evs)
	return "u1", "i0"
}

// firstNatural is the first n of ids ("" skipped) in natural order, for
// the ids the test data have: a prefix and a number (1, 943; u0, i299).
func firstNatural(ids []string, n int) []string {
	split := func(id string) (string, int) {
		k := len(id)
		for k > 0 && id[k-1] >= '0' && id[k-1] <= '9' {
			k--
		}
		v, err := strconv.Atoi(id[k:])
		if err != nil {
			panic("test id " + id + " does not end in a number")
		}
		return id[:k], v
	}
	out := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == "" })
	slices.SortFunc(out, func(a, b string) int {
		pa, va := split(a)
		pb, vb := split(b)
		return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(va, vb))
	})
	return out[:n]
}

// browserLog collects what must not happen in the page.
type browserLog struct {
	mu       sync.Mutex
	problems []string
	sent     map[network.RequestID]sentRequest
	urls     []string          // the URL of every request, in the order sent
	trained  bool              // a model is trained: /readyz must answer 200
	keyed    int               // requests seen with an Authorization header
	extra    []provokedFailure // provoked by this test, besides provoked
}

type sentRequest struct {
	method  string
	keyed   bool // the request carried Authorization
	trained bool // sent after a model was trained
}

// provokedFailure is a failed request a test causes on purpose: its
// method, path (with the query) and the statuses it may answer.
type provokedFailure struct {
	method string
	path   *regexp.Regexp
	status []int64
}

// provoked lists the failures that the test causes on purpose.
var provoked = []provokedFailure{
	// Content neighbours need a learned metric, which this test does not train.
	{"GET", regexp.MustCompile(`^/items/[^/]+/similar\?.*by=content`), []int64{503}},
	// Query by example: the route may not exist yet (404/405), or answer
	// that no metric is trained (503), or reject the vector (400).
	{"POST", regexp.MustCompile(`^/search/similar$`), []int64{400, 404, 405, 503}},
}

func (l *browserLog) addf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

func (l *browserLog) setTrained() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trained = true
}

func (l *browserLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.problems...)
}

func remoteText(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	if len(o.Value) > 0 {
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
		return string(o.Value)
	}
	return o.Description
}

// listen runs on the browser's message loop: it must be quick.
func (l *browserLog) listen(base string) func(ev any) {
	return func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, remoteText(a))
				}
				l.addf("console.error: %s", strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			l.addf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, msg)
		case *cdplog.EventEntryAdded:
			// Failed requests are judged below, by status.
			if ev.Entry.Level == cdplog.EntryLevelError && ev.Entry.Source != cdplog.EntrySourceNetwork {
				l.addf("browser log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			_, keyed := ev.Request.Headers["Authorization"]
			l.mu.Lock()
			l.sent[ev.RequestID] = sentRequest{method: ev.Request.Method, keyed: keyed, trained: l.trained}
			l.urls = append(l.urls, ev.Request.URL)
			if keyed {
				l.keyed++
			}
			l.mu.Unlock()
		case *network.EventResponseReceived:
			if ev.Response.Status < 400 {
				return
			}
			l.mu.Lock()
			req := l.sent[ev.RequestID]
			l.mu.Unlock()
			path := strings.TrimPrefix(ev.Response.URL, base)
			if !l.expected(req, path, ev.Response.Status) {
				l.addf("request failed: %s %s → %d", req.method, path, ev.Response.Status)
			}
		case *network.EventLoadingFailed:
			// A request cancelled by navigation (the dashboard aborts the
			// requests of the page it leaves) is no failure.
			if !ev.Canceled && ev.ErrorText != "net::ERR_ABORTED" {
				l.addf("request failed: %s (%s)", ev.ErrorText, ev.Type)
			}
		}
	}
}

// expected tells the failures the test provokes from the ones it must
// report.
func (l *browserLog) expected(req sentRequest, path string, status int64) bool {
	switch {
	case status == 401 && !req.keyed:
		return true // the page opened before the key was entered
	case status == 503 && path == "/readyz" && !req.trained:
		return true // not ready before the first training
	}
	l.mu.Lock()
	extra := l.extra
	l.mu.Unlock()
	for _, p := range append(slices.Clone(provoked), extra...) {
		if p.method == req.method && p.path.MatchString(path) && slices.Contains(p.status, status) {
			return true
		}
	}
	return false
}

// provoke adds a failure the test causes on purpose: method on the paths
// pattern matches, answering one of status.
func (l *browserLog) provoke(method, pattern string, status ...int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.extra = append(l.extra, provokedFailure{method, regexp.MustCompile(pattern), status})
}

// dash drives one tab of the dashboard.
type dash struct {
	t    *testing.T
	ctx  context.Context
	log  *browserLog
	shot string // screenshot folder
	last time.Time
}

// step logs how long the step that just ended took.
func (d *dash) step(what string) {
	d.t.Helper()
	now := time.Now()
	d.t.Logf("%5.1fs  %s", now.Sub(d.last).Seconds(), what)
	d.last = now
}

// do runs browser actions within a time limit and fails the test with the
// step's name.
func (d *dash) do(step string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.ctx, limit)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		d.fail(step, err)
	}
}

func (d *dash) fail(step string, err error) {
	d.t.Helper()
	if b, e := chromedp.Run(d.ctx, chromedp.CaptureScreenshot()); e == nil {
		p := filepath.Join(d.t.TempDir(), "failure.png")
		if os.WriteFile(p, b, 0o644) == nil {
			d.t.Logf("the page at the failure: %s", p)
		}
	}
	if text, e := chromedp.Run(d.ctx, chromedp.Evaluate[string](`document.querySelector('main')?.innerText.slice(0, 3000) || ''`)); e == nil {
		d.t.Logf("the page's text at the failure:\n%s", text)
	}
	for _, p := range d.log.list() {
		d.t.Log(p)
	}
	d.t.Fatalf("%s: %v", step, err)
}

// evalJS evaluates a JavaScript expression in the page.
func evalJS[T any](d *dash, step, expr string) T {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		d.fail(step, err)
	}
	return v
}

// wait polls a JavaScript expression until it is truthy. (chromedp's Poll
// compiles the predicate with new Function, which the dashboard's
// Content-Security-Policy forbids.)
func (d *dash) wait(step, expr string, limit time.Duration) {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(`+expr+`)`))
		cancel()
		if err != nil {
			d.fail(step, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			d.fail(step, fmt.Errorf("%s still false after %v", expr, limit))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor waits for an element to match a CSS selector.
func (d *dash) waitFor(step, selector string, limit time.Duration) {
	d.t.Helper()
	d.wait(step, fmt.Sprintf("document.querySelector(%q)", selector), limit)
}

// open goes to a hash route of the single page (no reload) and waits for
// an element of the page to show.
func (d *dash) open(route, ready string) {
	d.t.Helper()
	evalJS[chromedp.Void](d, "open "+route, fmt.Sprintf("location.hash = %q", route))
	d.waitFor("open "+route, ready, 60*time.Second)
}

// click clicks an element with the mouse.
func (d *dash) click(step, selector string) {
	d.t.Helper()
	d.do(step, 20*time.Second, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
}

// fitsWidth checks that nothing makes the page wider than the window.
func (d *dash) fitsWidth(route string) {
	d.t.Helper()
	w := evalJS[[]int](d, "width of "+route, `[document.documentElement.scrollWidth, window.innerWidth]`)
	if w[0] > w[1] {
		d.t.Errorf("%s is %dpx wide in a %dpx window: the page scrolls sideways", route, w[0], w[1])
	}
}

// screenshot saves the top of the page, at most maxHeight CSS pixels, as
// docs/screenshots/name.png.
func (d *dash) screenshot(name string, maxHeight float64) {
	d.t.Helper()
	evalJS[chromedp.Void](d, "scroll to the top", `window.scrollTo(0, 0)`)
	time.Sleep(150 * time.Millisecond) // let charts draw at their width
	dims := evalJS[[]float64](d, "screenshot "+name, `[document.documentElement.clientWidth, document.documentElement.scrollHeight]`)
	height := min(dims[1], maxHeight)
	shot := func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:                page.CaptureScreenshotFormatPng,
			Clip:                  &page.Viewport{Width: dims[0], Height: height, Scale: 1},
			CaptureBeyondViewport: new(true),
			FromSurface:           new(true),
		})
		return r.Data, err
	}
	ctx, cancel := context.WithTimeout(d.ctx, 20*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, shot)
	if err != nil {
		d.fail("screenshot "+name, err)
	}
	const limit = 300 << 10
	if len(raw) > limit {
		d.t.Errorf("screenshot %s is %d KB, more than %d KB", name, len(raw)>>10, limit>>10)
	}
	if err := os.WriteFile(filepath.Join(d.shot, name+".png"), raw, 0o644); err != nil {
		d.t.Fatal(err)
	}
	d.step(fmt.Sprintf("screenshot %s.png, %d KB", name, len(raw)>>10))
}

// pickerOffers waits until the model picker of a form offers exactly want
// (the names GET /models lists for it), and fails with what it offers.
func (d *dash) pickerOffers(step, form string, want []string) {
	d.t.Helper()
	expr := fmt.Sprintf(`[...document.querySelectorAll('%s .models-pick input[type=checkbox]')].map((i) => i.value)`, form)
	wantJSON, _ := json.Marshal(want)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := evalJS[[]string](d, step, expr)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			d.t.Errorf("%s offers %q, want %s", step, got, wantJSON)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fmtThousands writes n as the dashboard does (en-US grouping).
func fmtThousands(n int64) string {
	s := fmt.Sprint(n)
	for k := len(s) - 3; k > 0; k -= 3 {
		s = s[:k] + "," + s[k:]
	}
	return s
}

// tableFits checks that a table's scrolling box does not scroll sideways.
func (d *dash) tableFits(step, selector string) {
	d.t.Helper()
	w := evalJS[[]int](d, step, fmt.Sprintf(`(() => { const el = document.querySelector(%q); return el ? [el.scrollWidth, el.clientWidth] : [-1, -1]; })()`, selector))
	if w[0] < 0 {
		d.fail(step, fmt.Errorf("no %s", selector))
	}
	if w[0] > w[1] {
		d.t.Errorf("%s: the table is %dpx wide in a %dpx box: it scrolls sideways", step, w[0], w[1])
	}
}

// setViewport emulates a window of the given size (a phone when mobile).
func (d *dash) setViewport(width, height int64, mobile bool) {
	d.t.Helper()
	opts := []chromedp.EmulateViewportOption{chromedp.EmulatePortrait}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	d.do(fmt.Sprintf("viewport %dx%d", width, height), 10*time.Second, chromedp.EmulateViewport(width, height, opts...))
}

// screenshotDir is where the dashboard tests save their screenshots: the
// README's docs/screenshots only when asked (RECSYS_SCREENSHOTS=1), else a
// temporary folder.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Getenv("RECSYS_SCREENSHOTS") == "1" {
		dir = filepath.Join("docs", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startBrowser starts headless Chromium (chrome, as findChromium found it)
// with a fresh profile and opens a tab whose events a new browserLog of the
// server at base judges. The browser closes when the test ends.
func startBrowser(t *testing.T, chrome, base string) (context.Context, *browserLog) {
	t.Helper()
	profile, err := os.MkdirTemp("", "recsys-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(cancelAlloc)
	blog := &browserLog{sent: map[network.RequestID]sentRequest{}}
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(blog.listen(base)))
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chrome, err)
	}
	return ctx, blog
}

func TestDashboard_endToEnd(t *testing.T) {
	chrome := findChromium(t)
	start := time.Now()
	a := startApp(t, func(c *Config) { c.AdminKey = dashAdminKey })
	user, item := dashboardData(t, a)
	counts := a.counts(t)
	t.Logf("data loaded in %v: %d users, %d items, %d events", time.Since(start).Round(time.Millisecond), counts.Users, counts.Items, counts.Events)

	ctx, blog := startBrowser(t, chrome, a.URL)
	d := &dash{t: t, ctx: ctx, log: blog, shot: screenshotDir(t), last: time.Now()}
	d.setViewport(1280, 900, false)

	// No key yet: the page says what is missing.
	d.do("load the dashboard", 30*time.Second, chromedp.Navigate(a.URL+"/#/overview"))
	d.wait("the overview asks for a key", `document.querySelector('#stats .error')?.textContent.includes('unauthorized')`, 30*time.Second)

	// Enter the admin key.
	d.click("open the key form", "#key-summary")
	d.do("type the key", 10*time.Second, chromedp.SendKeys(chromedp.CSS("#key-input"), dashAdminKey))
	d.click("save the key", "#key-save")
	d.wait("the overview shows the counts", fmt.Sprintf(`document.querySelector('#stat-users')?.textContent === %q`, fmt.Sprintf("%d", counts.Users)), 30*time.Second)
	if got := evalJS[string](d, "key storage", `sessionStorage.getItem('recsys.key')`); got != dashAdminKey {
		t.Errorf("sessionStorage holds %q, want the key", got)
	}
	d.step("the key is entered and the overview loaded")

	// Retrain two models and the content metric from the Models page and
	// watch the job. The form offers every name a retrain accepts.
	d.open("#/models", "#retrain-form")
	d.pickerOffers("the retrain form", "#retrain-form", recsys.Kinds())
	evalJS[chromedp.Void](d, "pick models", `for (const m of ['popular', 'itemknn', 'content']) document.querySelector('#retrain-form input[value="' + m + '"]').checked = true`)
	d.click("start retraining", "#retrain-start")
	d.waitFor("the job panel", "#job-live .job-panel", 20*time.Second)
	seen := map[string]bool{}
	deadline := time.Now().Add(100 * time.Second)
	for state := ""; state != "succeeded"; {
		state = evalJS[string](d, "job state", `document.querySelector('#job-live .job-panel')?.dataset.state || ''`)
		seen[state] = true
		if state == "failed" || state == "cancelled" {
			d.fail("retraining", fmt.Errorf("the job ended %s", state))
		}
		if time.Now().After(deadline) {
			d.fail("retraining", fmt.Errorf("the job is still %s", state))
		}
		time.Sleep(100 * time.Millisecond)
	}
	blog.setTrained()
	t.Logf("retraining from the page: states seen %v", seen)
	d.step("retrained popular, itemknn and content from the page")
	d.waitFor("the progress bar at 100%", `#job-live .progress[aria-valuenow="100"]`, 5*time.Second)
	d.waitFor("the models table", `#models-list tr[data-model="itemknn"]`, 20*time.Second)
	d.waitFor("the content metric in the models table", `#models-list tr[data-model="content"]`, 20*time.Second)

	// The serving cost column: its header, a measured mean and p99 for
	// each recommender, a dash for the content metric (no recommender).
	heads := evalJS[[]string](d, "models columns", `[...document.querySelectorAll('#models-list thead th')].map((th) => th.textContent)`)
	if !slices.Contains(heads, "Serve ms") {
		t.Errorf("the models table has the columns %q, want a Serve ms column", heads)
	}
	costs := evalJS[map[string]string](d, "serving costs", `Object.fromEntries([...document.querySelectorAll('#models-list tr[data-model]')].map((r) => [r.dataset.model, r.querySelector('td.serving-cost')?.textContent]))`)
	measured := regexp.MustCompile(`^\d+\.\d{3} p99 \d+\.\d{3}$`)
	for _, m := range []string{"popular", "itemknn"} {
		if !measured.MatchString(costs[m]) {
			t.Errorf("the serving cost of %s reads %q, want its mean and p99", m, costs[m])
		}
	}
	if costs["content"] != "–" {
		t.Errorf("the serving cost of the content metric reads %q, want –", costs["content"])
	}

	// Activate buttons only where activation can succeed: the newest
	// version of a recommender that is not active (the content metric is
	// not one; activating it is a 404).
	offered := evalJS[[]string](d, "activate buttons", `[...document.querySelectorAll('#models-list button.activate')].map((b) => b.dataset.model)`)
	if slices.Contains(offered, "content") || !slices.Contains(offered, "popular") {
		t.Errorf("Activate buttons for %q, want popular's and none for content", offered)
	}
	for _, m := range offered {
		if !slices.Contains(recsys.Names(), m) {
			t.Errorf("an Activate button for %q, which is not a recommender", m)
		}
	}
	// The validation chart draws no bar for the content metric, which has
	// no validation score, and says so instead.
	d.waitFor("the validation chart", "#validation-chart svg rect.bar", 10*time.Second)
	bars := evalJS[[]string](d, "validation bars", `[...document.querySelectorAll('#validation-chart svg rect.bar title')].map((t) => t.textContent)`)
	for _, b := range bars {
		if strings.HasPrefix(b, "content") {
			t.Errorf("the validation chart has a bar %q for the content metric, which has no score", b)
		}
	}
	if n := evalJS[int](d, "no score labels", `[...document.querySelectorAll('#validation-chart svg text.missing')].filter((t) => t.textContent === 'no score').length`); n != 1 {
		t.Errorf("%d 'no score' labels in the validation chart, want 1 (content)", n)
	}

	// Activate popular, then itemknn again, from the table.
	for _, m := range []string{"popular", "itemknn"} {
		d.click("activate "+m, fmt.Sprintf(`button.activate[data-model=%q]`, m))
		d.wait("activated "+m, fmt.Sprintf(`document.querySelector('#models-list tr[data-model=%q] .badge-active')`, m), 20*time.Second)
	}
	d.step("activated popular, then itemknn")

	// Start a retraining that is slow enough to cancel, and cancel it.
	evalJS[chromedp.Void](d, "pick slim", `for (const i of document.querySelectorAll('#retrain-form input[name="model"]')) i.checked = i.value === 'slim'`)
	d.click("start a second retraining", "#retrain-start")
	d.wait("the second job", `document.querySelector('#job-live .job-panel')?.dataset.job && document.querySelector('#job-live .cancel-job')`, 20*time.Second)
	if evalJS[bool](d, "cancel", `(() => { const b = document.querySelector('#job-live .cancel-job'); if (!b) return false; b.click(); return true; })()`) {
		d.wait("the job is cancelled", `['cancelled', 'succeeded'].includes(document.querySelector('#job-live .job-panel')?.dataset.state)`, 30*time.Second)
	}
	// Stage timings of the first job in the history.
	d.wait("the job history", `document.querySelectorAll('#job-history tr.job-row').length >= 2`, 20*time.Second)
	evalJS[chromedp.Void](d, "open a job", `document.querySelectorAll('#job-history tr.job-row button.link-btn')[1].click()`)
	d.waitFor("stage timings", "#job-history tr.job-detail .stage-row", 10*time.Second)
	d.step("started and cancelled a retraining")
	d.screenshot("models", 1500)

	// Start an evaluation of two models with one fold from the page. The
	// form offers the recommenders alone: the content metric cannot be
	// evaluated.
	d.open("#/evaluations", "#eval-form")
	d.pickerOffers("the evaluation form", "#eval-form", recsys.Names())
	evalJS[chromedp.Void](d, "fill the evaluation form", `
		for (const m of ['popular', 'itemknn']) document.querySelector('#eval-form input[value="' + m + '"]').checked = true;
		document.querySelector('#eval-folds').value = '1';`)
	d.click("start the evaluation", "#eval-start")
	d.waitFor("the evaluation job", "#eval-live .job-panel", 20*time.Second)
	// A second report to compare with, through the API: it queues behind
	// the page's evaluation and runs while the test reads the first.
	var acc api.JobAccepted
	status, body := a.do(t, http.MethodPost, "/admin/evaluations", "application/json",
		[]byte(`{"models":["popular"],"folds":1,"seed":2}`), "Authorization", "Bearer "+dashAdminKey)
	if status != http.StatusAccepted || json.Unmarshal(body, &acc) != nil {
		t.Fatalf("POST /admin/evaluations: %d %s", status, body)
	}
	d.wait("the report opens", `location.hash.startsWith('#/evaluations/') && document.querySelector('#report-table tbody tr')`, 100*time.Second)
	first := strings.TrimPrefix(evalJS[string](d, "report id", `location.hash`), "#/evaluations/")
	rows := evalJS[int](d, "report rows", `document.querySelectorAll('#report-table tbody tr').length`)
	if rows != 3 {
		t.Errorf("the report table has %d rows, want 3 (popular, itemknn and the auto row)", rows)
	}
	d.step("evaluated from the page")
	keyed := func(p string, out any) int {
		status, body := a.do(t, http.MethodGet, p, "", nil, "Authorization", "Bearer "+dashAdminKey)
		if status < 300 {
			if err := json.Unmarshal(body, out); err != nil {
				t.Fatal(err)
			}
		}
		return status
	}
	second := waitJob(t, keyed, acc.JobID, 100*time.Second, api.Job.Done)
	if second.State != api.JobSucceeded {
		t.Fatalf("the second evaluation: %+v", second)
	}
	d.step("evaluated through the API")

	// The report with its charts: pick another measure.
	d.open("#/evaluations", "#reports table")
	d.wait("both reports are listed", `document.querySelectorAll('#reports a.report-link').length >= 2`, 10*time.Second)
	d.click("open the first report", fmt.Sprintf(`#reports a.report-link[href="#/evaluations/%s"]`, first))
	d.waitFor("the report", "#metric-chart svg rect.bar", 20*time.Second)
	evalJS[chromedp.Void](d, "pick map", `(() => { const s = document.querySelector('#metric-chart-select'); s.value = 'map'; s.dispatchEvent(new Event('change')); })()`)
	d.waitFor("the chart of map", `#metric-chart svg rect.bar`, 10*time.Second)
	d.waitFor("the cutoff chart", `#atk-charts svg rect.bar`, 10*time.Second)
	d.screenshot("evaluation", 1700)

	// Compare the two reports.
	evalJS[chromedp.Void](d, "compare", fmt.Sprintf(`(() => { const s = document.querySelector('#compare-with'); s.value = %q; s.form.requestSubmit(); })()`, second.ReportID))
	d.waitFor("the comparison", "#compare-table td.delta", 30*time.Second)
	d.waitFor("the comparison chart", "#compare-chart svg rect.bar", 10*time.Second)
	d.screenshot("evaluation-compare", 1400)

	// The Users page lists the users in natural order, a page at a time,
	// and opens the one clicked; the Items page lists the catalogue in
	// natural order too (2 before 10, not 1, 10, 100, 1000).
	snap, err := a.store.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantUsers, wantItems := firstNatural(snap.UserIDs, 50), firstNatural(snap.ItemIDs, 25)
	d.open("#/users", "#users-table tr.user-row")
	rowIDs := func(step, rows string) []string {
		return evalJS[[]string](d, step, `[...document.querySelectorAll('`+rows+`')].map((tr) => tr.dataset.id)`)
	}
	if got := rowIDs("the first page of users", "#users-table tr.user-row"); !slices.Equal(got, wantUsers[:25]) {
		t.Errorf("the Users page lists %q first, want %q", got, wantUsers[:25])
	}
	u1, err := a.store.User(context.Background(), wantUsers[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := evalJS[string](d, "the first user's events", `document.querySelector('#users-table tr.user-row td:nth-child(2)').textContent`); got != fmtThousands(u1.Events) {
		t.Errorf("the Users page shows %q events for %s, want %s", got, u1.ID, fmtThousands(u1.Events))
	}
	d.click("load more users", "#users-more")
	d.wait("the next page of users", `document.querySelectorAll('#users-table tr.user-row').length === 50`, 20*time.Second)
	if got := rowIDs("two pages of users", "#users-table tr.user-row"); !slices.Equal(got, wantUsers) {
		t.Errorf("two pages of the Users page list %q, want %q", got, wantUsers)
	}
	d.click("open a listed user", fmt.Sprintf(`#users-table tr.user-row[data-id=%q] a`, wantUsers[1]))
	d.wait("the listed user's page", fmt.Sprintf(`location.hash.split('?')[0] === %q && document.querySelector('#user-summary #user-events')`, "#/users/"+wantUsers[1]), 20*time.Second)
	d.open("#/items", "#catalogue-table tr.catalogue-row")
	if got := rowIDs("the first page of items", "#catalogue-table tr.catalogue-row"); !slices.Equal(got, wantItems) {
		t.Errorf("the Items page lists %q first, want %q", got, wantItems)
	}
	d.step("the Users and Items pages list in natural order")

	// A user's history and recommendations, with reasons, from the form.
	d.open("#/users", "#user-id")
	d.do("type a user", 10*time.Second, chromedp.SendKeys(chromedp.CSS("#user-id"), user+"\n"))
	d.waitFor("recommendations", "#recs-table tr.rec-row", 30*time.Second)
	d.waitFor("reasons", "#recs-table .reason", 10*time.Second)
	d.waitFor("the history", "#history-table tr.history-row", 30*time.Second)
	if evalJS[bool](d, "more history", `!document.querySelector('#history-more').hidden`) {
		n := evalJS[int](d, "history rows", `document.querySelectorAll('#history-table tr.history-row').length`)
		d.click("load more history", "#history-more")
		d.wait("the next page", fmt.Sprintf(`document.querySelectorAll('#history-table tr.history-row').length > %d`, n), 20*time.Second)
	}
	d.step("a user's recommendations and history")
	// Recommendations from another model, chosen in the page.
	evalJS[chromedp.Void](d, "pick popular", `(() => { const s = document.querySelector('#rec-model'); s.value = 'popular'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`)
	d.wait("popular answers", `document.querySelector('#rec-model-used')?.textContent === 'popular'`, 20*time.Second)
	evalJS[chromedp.Void](d, "pick itemknn", `(() => { const s = document.querySelector('#rec-model'); s.value = 'itemknn'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`)
	d.wait("itemknn answers", `document.querySelector('#rec-model-used')?.textContent === 'itemknn' && document.querySelector('#recs-table .reason')`, 20*time.Second)
	d.step("recommendations from popular, then itemknn")
	d.screenshot("user", 1400)

	// An item: details, both kinds of neighbours, query by example.
	d.open("#/items/"+item, "#similar-collaborative table")
	d.wait("content neighbours say why they are missing", `document.querySelector('#similar-content .error, #similar-content table')`, 20*time.Second)
	if evalJS[bool](d, "content error", `!!document.querySelector('#similar-content .error')`) {
		if msg := evalJS[string](d, "content error text", `document.querySelector('#similar-content .error').textContent`); !strings.Contains(msg, "model_not_ready") {
			t.Errorf("content neighbours: %q, want the model_not_ready message", msg)
		}
	}
	d.wait("the search form is filled", `document.querySelector('#search-features')?.value.length > 2`, 10*time.Second)
	d.step("an item and its neighbours")
	d.click("search by example", "#search-go")
	d.wait("the search answers", `document.querySelector('#search-result .error, #search-result table, #search-result p:not(.loading)')`, 20*time.Second)
	t.Logf("query by example: %s", evalJS[string](d, "search result", `document.querySelector('#search-result').textContent.slice(0, 200)`))
	d.screenshot("item", 1400)

	// Every page at desktop width, then at 390px.
	pages := []struct{ name, route, ready string }{
		{"overview", "#/overview", "#chart-events-total svg"},
		{"models", "#/models", "#models-list table"},
		{"evaluations", "#/evaluations", "#reports table"},
		{"report", "#/evaluations/" + first, "#metric-chart svg"},
		{"compare", "#/evaluations/" + first + "?vs=" + second.ReportID, "#compare-table"},
		{"users", "#/users", "#user-id"},
		{"user", "#/users/" + user, "#recs-table tr.rec-row"},
		{"items", "#/items", "#catalogue table tbody tr"},
		{"item", "#/items/" + item, "#similar-collaborative table"},
	}
	for _, p := range pages {
		d.open(p.route, p.ready)
		d.fitsWidth(p.route + " at 1280px")
	}
	// The models table, every validation measure included, fits its box:
	// no sideways scroll inside the page either.
	d.open("#/models", "#models-list table")
	d.tableFits("the models table at 1280px", "#models-list .table-wrap")
	d.step("every page at 1280px")
	d.open("#/overview", "#chart-events-total svg")
	d.wait("the service is ready", `document.querySelector('#health-ready .health-state')?.textContent === 'ready'`, 20*time.Second)
	d.waitFor("the active model", "#active-model", 20*time.Second)
	d.screenshot("overview", 1100)

	d.setViewport(390, 844, true)
	phone := map[string]bool{"overview": true, "models": true, "report": true, "user": true, "item": true}
	for _, p := range pages {
		d.open(p.route, p.ready)
		d.fitsWidth(p.route + " at 390px")
		if phone[p.name] {
			d.screenshot(p.name+"-phone", 1700)
		}
	}
	if ok := evalJS[bool](d, "key in the phone layout", `document.querySelector('#key-summary').getBoundingClientRect().right <= window.innerWidth`); !ok {
		t.Error("the key button is outside the phone's screen")
	}

	// A report with several cutoffs draws REC@k and P@k against k, and
	// puts rec@5 and rec@20 beside rec@10 in the table. (The server's
	// evaluations report @10 only, so this report is made up.)
	cutoffs := &api.Report{Kind: "recommendation", Dataset: "made up by the dashboard test", Protocol: "standard", Folds: 3, Seed: 1}
	for k, model := range []string{"popular", "itemknn"} {
		m := map[string]api.MetricValue{}
		for _, name := range []string{"adg", "map", "ndcg", "atop", "auc", "mrr"} {
			m[name] = api.MetricValue{Mean: 0.3 + 0.1*float64(k), SE: 0.01}
		}
		for _, cut := range []int{5, 10, 20} {
			for _, fam := range []string{"rec", "p", "ndcg"} {
				m[fmt.Sprintf("%s@%d", fam, cut)] = api.MetricValue{Mean: float64(cut) / 100 * float64(k+1), SE: 0.005}
			}
		}
		cutoffs.Rows = append(cutoffs.Rows, api.ReportRow{Model: model, Params: map[string]float64{}, Metrics: m})
	}
	if err := a.store.PutReport(context.Background(), cutoffs); err != nil {
		t.Fatal(err)
	}
	d.open("#/evaluations/"+cutoffs.ID, "#atk-charts")
	for _, fam := range []string{"rec", "p", "ndcg"} {
		d.waitFor("the "+fam+"@k curve", fmt.Sprintf(`#atk-charts figure[data-family=%q] svg path.line`, fam), 10*time.Second)
	}
	cols := evalJS[[]string](d, "report columns", `[...document.querySelectorAll('#report-table thead th')].map((th) => th.textContent)`)
	if got, want := strings.Join(cols, " "), "model adg rec@5 rec@10 rec@20 map ndcg ndcg@5 ndcg@10 ndcg@20 atop auc p@5 p@10 p@20 mrr params train s"; got != want {
		t.Errorf("report columns:\n got %s\nwant %s", got, want)
	}
	d.fitsWidth("a report with several cutoffs at 390px")
	d.step("a report with several cutoffs")

	// A job whose content metric was skipped says why in the job history.
	now := time.Now().UTC()
	skippedJob := api.Job{ID: "j999999999999", Kind: api.JobTrain, Models: []string{"popular", "content"}, State: api.JobSucceeded,
		Trigger: "api", Progress: 1, Stages: []api.StageTiming{}, CreatedAt: now, StartedAt: &now, FinishedAt: &now,
		Skipped: []api.SkippedModel{{Model: "content", Reason: "no item has features"}}}
	if err := a.store.PutJob(context.Background(), skippedJob); err != nil {
		t.Fatal(err)
	}
	d.setViewport(1280, 900, false)
	d.open("#/models", fmt.Sprintf(`#job-history tr.job-row[data-job=%q]`, skippedJob.ID))
	evalJS[chromedp.Void](d, "open the job", fmt.Sprintf(`document.querySelector('#job-history tr.job-row[data-job=%q] button.link-btn').click()`, skippedJob.ID))
	d.waitFor("the job's details", `#job-history tr.job-detail`, 10*time.Second)
	if got := evalJS[string](d, "skipped text", `document.querySelector('#job-history tr.job-detail').textContent`); !strings.Contains(got, "Skipped content: no item has features") {
		t.Errorf("the job history says %q, want the skipped content metric and why", got)
	}
	d.step("a skipped content metric in the job history")

	// A job that passed over a model for its serving cost says which, by
	// how much, and that the one it activated is within the budget.
	overJob := skippedJob
	overJob.ID, overJob.Models, overJob.Skipped, overJob.Auto, overJob.Activated = "j999999999998", []string{"popular", "userknn"}, nil, true, "popular"
	overJob.OverBudget = []api.OverBudget{{Model: "userknn", MeanMS: 1.25, P99MS: 7.5, Budget: "mean=0.6ms,p99=5ms", Factor: 2.0833}}
	if err := a.store.PutJob(context.Background(), overJob); err != nil {
		t.Fatal(err)
	}
	d.open("#/models", fmt.Sprintf(`#job-history tr.job-row[data-job=%q]`, overJob.ID))
	evalJS[chromedp.Void](d, "open the job over budget", fmt.Sprintf(`document.querySelector('#job-history tr.job-row[data-job=%q] button.link-btn').click()`, overJob.ID))
	detail := fmt.Sprintf(`#job-history tr.job-row[data-job=%q] + tr.job-detail`, overJob.ID)
	d.waitFor("the job's over-budget note", detail+` .over-budget[data-model="userknn"]`, 10*time.Second)
	got := evalJS[string](d, "over-budget text", fmt.Sprintf(`document.querySelector(%q).textContent`, detail))
	for _, want := range []string{"Over the serving budget mean=0.6ms,p99=5ms: userknn (mean 1.250 ms, p99 7.500 ms", "2.1× the budget", "Activated popular: the best validation ADG within the serving budget."} {
		if !strings.Contains(got, want) {
			t.Errorf("the job history says %q, want %q", got, want)
		}
	}
	d.step("a model over the serving budget in the job history")

	// Events of today beside MovieLens' 1997–98: the growth chart still
	// gives the old span most of its width instead of a sliver.
	if status, body := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(`{"interactions":[{"user_id":"`+user+`","item_id":"`+item+`"}]}`),
		"Authorization", "Bearer "+dashAdminKey); status != http.StatusCreated {
		t.Fatalf("POST /interactions: %d %s", status, body)
	}
	d.open("#/users", "#user-id")
	d.open("#/overview", "#chart-events-per-day svg rect.bar")
	d.wait("the overview counts today's event", fmt.Sprintf(`document.querySelector('#stat-events')?.textContent === %q`, fmtThousands(counts.Events+1)), 20*time.Second)
	share := evalJS[float64](d, "the old span's width", `(() => {
		const svg = document.querySelector('#chart-events-per-day svg');
		const xs = [...svg.querySelectorAll('rect.bar')].slice(0, -1).map((r) => r.x.baseVal.value + r.width.baseVal.value / 2);
		return (Math.max(...xs) - Math.min(...xs)) / svg.width.baseVal.value;
	})()`)
	if share < 0.5 {
		t.Errorf("the days before today's event take %.1f%% of the growth chart's width, want at least half", 100*share)
	}
	if text := evalJS[string](d, "growth text", `document.querySelector('#growth p').textContent`); !strings.Contains(text, "No events from") {
		t.Errorf("the growth text %q does not say which stretch the axis skips", text)
	}
	d.step("the growth chart with events decades apart")

	// The Online page: start an experiment from the form, see it live as
	// lists are shown and clicked, the CTR chart, and stop it.
	d.open("#/online", `#experiment-form[data-ready="true"]`)
	evalJS[chromedp.Void](d, "pick the arms", `(() => {
		const rows = document.querySelectorAll('#experiment-arms-form .arm-row');
		rows[0].querySelector('select').value = 'popular';
		rows[1].querySelector('select').value = 'itemknn';
	})()`)
	d.click("start the experiment", "#experiment-start")
	d.waitFor("the running experiment", `#experiment-running [data-experiment] #experiment-arms tr[data-arm="itemknn"]`, 20*time.Second)
	auth := []string{"Authorization", "Bearer " + dashAdminKey}
	for u := range 20 {
		status, body := a.do(t, http.MethodGet, fmt.Sprintf("/users/online-%d/recommendations?n=5", u), "", nil, auth...)
		var rec api.RecommendationsOut
		if status != http.StatusOK || json.Unmarshal(body, &rec) != nil || rec.Arm == "" {
			t.Fatalf("recommendations in the experiment: %d %s", status, body)
		}
		click := fmt.Sprintf(`{"user_id":%q,"item_id":%q,"type":"click","recommendation_id":%q}`, rec.UserID, rec.Items[0].ItemID, rec.RecommendationID)
		if status, body := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(click), auth...); status != http.StatusCreated {
			t.Fatalf("click: %d %s", status, body)
		}
	}
	d.wait("the arms count the lists live", `[...document.querySelectorAll('#experiment-arms tbody tr')].reduce((n, tr) => n + Number(tr.children[2].textContent.replace(/,/g, '')), 0) === 100`, 20*time.Second)
	// Four lists of five for a placement, the first item of three clicked:
	// by hand 4 lists, 20 shown, 3 clicks, CTR 15.00%.
	if status, body := a.do(t, http.MethodPut, "/admin/placements/online-home", "application/json", []byte(`{}`), auth...); status != http.StatusCreated {
		t.Fatalf("PUT /admin/placements/online-home: %d %s", status, body)
	}
	for u := range 4 {
		status, body := a.do(t, http.MethodGet, fmt.Sprintf("/users/online-%d/recommendations?n=5&placement=online-home", u), "", nil, auth...)
		var rec api.RecommendationsOut
		if status != http.StatusOK || json.Unmarshal(body, &rec) != nil || len(rec.Items) != 5 {
			t.Fatalf("recommendations for the placement: %d %s", status, body)
		}
		if u == 3 {
			continue
		}
		click := fmt.Sprintf(`{"user_id":%q,"item_id":%q,"type":"click","recommendation_id":%q}`, rec.UserID, rec.Items[0].ItemID, rec.RecommendationID)
		if status, body := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(click), auth...); status != http.StatusCreated {
			t.Fatalf("click: %d %s", status, body)
		}
	}
	d.open("#/overview", "#stats")
	d.open("#/online", "#chart-ctr svg circle.dot")
	if got := evalJS[int](d, "CTR points", `document.querySelectorAll('#chart-ctr svg circle.dot').length`); got < 1 {
		t.Errorf("the CTR chart has %d points, want one per model shown today", got)
	}
	d.waitFor("the placement's row", `#online-placements-table tr[data-placement="online-home"]`, 20*time.Second)
	row := evalJS[[]string](d, "the placement's row", `[...document.querySelectorAll('#online-placements-table tr[data-placement="online-home"] td')].map((c) => c.textContent)`)
	if len(row) != 7 || row[0] != "online-home" || row[1] != "4" || row[2] != "20" || row[3] != "3" || !strings.HasPrefix(row[4], "15.00% [") {
		t.Errorf("the By placement row of online-home = %q, want 4 lists, 20 shown, 3 clicks, CTR 15.00%%", row)
	}
	if got := evalJS[int](d, "rows without a placement", `document.querySelectorAll('#online-placements-table tr[data-placement=""]').length`); got != 1 {
		t.Errorf("the By placement table has %d rows for lists without a placement, want 1 (the experiment's lists)", got)
	}
	d.fitsWidth("the Online page at 1280px")
	d.click("stop the experiment", "#experiment-stop")
	d.wait("no experiment runs", `document.querySelector('#experiment-running')?.textContent.includes('No experiment is running')`, 20*time.Second)
	d.waitFor("the stopped experiment listed", `#experiments-past table`, 20*time.Second)
	d.step("the Online page: an experiment started, watched and stopped")

	// Give late events a moment, then judge.
	time.Sleep(300 * time.Millisecond)
	blog.mu.Lock()
	keyedRequests := blog.keyed
	blog.mu.Unlock()
	if keyedRequests == 0 {
		t.Error("no request carried the key: the browser hides the Authorization header, so a 401 could pass unnoticed")
	}
	for _, p := range blog.list() {
		t.Error(p)
	}
	t.Logf("dashboard test took %v", time.Since(start).Round(time.Millisecond))
}
