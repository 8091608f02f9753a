package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/recsys-engine/recsys/api"
)

// The Rules page test drives the dashboard's #/rules (web/static/js/rules.js)
// in headless Chromium against a live App holding the small generated
// catalogue of the dashboard test: it creates, edits and deletes a rule
// and a placement through the forms and checks each write through the
// API, shows a condition's syntax error under its field, and compares the
// preview's two lists with the API's own answers. A second test previews
// pin rules that reorder the user's own list, to see items marked moved.

// setFields sets form controls, given as selector and value pairs, and
// sends the input and change events typing would.
func (d *dash) setFields(step string, pairs ...string) {
	d.t.Helper()
	kv, _ := json.Marshal(pairs)
	evalJS[chromedp.Void](d, step, fmt.Sprintf(`(() => {
		const kv = %s;
		for (let k = 0; k < kv.length; k += 2) {
			const el = document.querySelector(kv[k]);
			if (!el) throw new Error('no ' + kv[k]);
			el.value = kv[k + 1];
			if (el.value !== kv[k + 1]) throw new Error(kv[k] + ' does not take ' + JSON.stringify(kv[k + 1]));
			el.dispatchEvent(new Event('input', {bubbles: true}));
			el.dispatchEvent(new Event('change', {bubbles: true}));
		}
	})()`, kv))
}

// text is the trimmed text of the first element matching selector, "" for
// none.
func (d *dash) text(selector string) string {
	d.t.Helper()
	return evalJS[string](d, "text of "+selector, fmt.Sprintf(`(document.querySelector(%q)?.textContent || '').trim()`, selector))
}

// previewRow is a row of a preview list as the page shows it.
type previewRow struct {
	Item   string `json:"item"`
	Change string `json:"change"`
	Rules  string `json:"rules"`
}

func (d *dash) previewRows(list string) []previewRow {
	d.t.Helper()
	return evalJS[[]previewRow](d, "the rows of "+list, fmt.Sprintf(`[...document.querySelectorAll('%s tr.preview-row')].map((tr) => ({item: tr.dataset.item, change: tr.dataset.change, rules: tr.dataset.rules || ''}))`, list))
}

// rulesPage is a live App holding the generated catalogue of the dashboard
// test with itemknn trained, and a browser on its #/rules with the admin
// key entered.
type rulesPage struct {
	*dash
	a    *testApp
	user string // a user of the catalogue with a full list
}

// openRulesPage starts the App and the browser, and enters the key on
// #/rules through the key form.
func openRulesPage(t *testing.T) *rulesPage {
	t.Helper()
	chrome := findChromium(t)
	start := time.Now()
	a := startApp(t, func(c *Config) { c.AdminKey = dashAdminKey })
	user, _ := generatedDashboardData(t, a)
	d := &dash{t: t} // the browser's parts come once it starts
	p := &rulesPage{dash: d, a: a, user: user}
	var acc api.JobAccepted
	p.call(http.MethodPost, "/admin/retrain", `{"models":["itemknn"]}`, http.StatusAccepted, &acc)
	keyed := func(path string, out any) int {
		status, body := a.do(t, http.MethodGet, path, "", nil, "Authorization", "Bearer "+dashAdminKey)
		if status < 300 {
			if err := json.Unmarshal(body, out); err != nil {
				t.Fatal(err)
			}
		}
		return status
	}
	if j := waitJob(t, keyed, acc.JobID, 60*time.Second, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("training itemknn: %+v", j)
	}
	t.Logf("data loaded and itemknn trained in %v", time.Since(start).Round(time.Millisecond))

	ctx, blog := startBrowser(t, chrome, a.URL)
	blog.setTrained()
	d.ctx, d.log, d.shot, d.last = ctx, blog, screenshotDir(t), time.Now()
	d.setViewport(1280, 900, false)

	d.do("load the rules page", 30*time.Second, chromedp.Navigate(a.URL+"/#/rules"))
	d.wait("the page asks for a key", `document.querySelector('#rules-list .error')?.textContent.includes('unauthorized')`, 30*time.Second)
	if got := evalJS[string](d, "the current page", `document.querySelector('#nav a[aria-current="page"]')?.textContent`); got != "Rules" {
		t.Errorf("the nav marks %q as the current page, want Rules", got)
	}
	d.click("open the key form", "#key-summary")
	d.do("type the key", 10*time.Second, chromedp.SendKeys(chromedp.CSS("#key-input"), dashAdminKey))
	d.click("save the key", "#key-save")
	d.wait("no rules yet", `document.querySelector('#rules-list')?.textContent.includes('No rules yet')`, 20*time.Second)
	d.waitFor("the placement form", `#placement-form[data-ready="true"]`, 20*time.Second)
	d.step("the key is entered and the page loaded")
	return p
}

// call sends one API request with the admin key, checks its status and
// decodes the answer into out (if not nil).
func (p *rulesPage) call(method, path, body string, want int, out any) {
	p.t.Helper()
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	status, b := p.a.do(p.t, method, path, ct, []byte(body), "Authorization", "Bearer "+dashAdminKey)
	if status != want {
		p.t.Fatalf("%s %s: %d %s, want %d", method, path, status, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			p.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// previewMark is the change and rules cells of a row of the list with
// steering.
type previewMark struct {
	Item  string `json:"item"`
	Mark  string `json:"mark"`  // the change cell's text: "added", "↑ 2", "↓ 1" or ""
	Title string `json:"title"` // a moved item's rank without steering, "#3 without steering"
	Class string `json:"class"` // move-up or move-down for a moved item
	Chips string `json:"chips"` // the rule chips' names, space-separated
}

func (d *dash) previewMarks() []previewMark {
	d.t.Helper()
	return evalJS[[]previewMark](d, "the change marks", `[...document.querySelectorAll('#preview-steered tr.preview-row')].map((tr) => {
		const cell = tr.querySelector('td.preview-change');
		const move = cell?.querySelector('.move-up, .move-down');
		return {item: tr.dataset.item, mark: (cell?.textContent || '').trim(), title: move?.title || '',
			class: move ? (move.classList.contains('move-up') ? 'move-up' : 'move-down') : '',
			chips: [...tr.querySelectorAll('td.preview-rules .chip')].map((c) => c.textContent.trim()).join(' ')};
	})`)
}

// previewWant is what the preview shows for the API's two answers, the
// list without steering (plain) and the one with the placement (steered,
// with explain=true): an item of steered is added when plain lacks it,
// moved when its rank differs, else the same.
type previewWant struct {
	plain, steered               []previewRow
	marks                        []previewMark
	added, removed, moved, ruled int
	movedUp, movedDown           int
	movedByRule, movedAlong      int // moved items a rule names, and the others
	summary                      string
}

func wantPreview(plain, steered api.RecommendationsOut) previewWant {
	var w previewWant
	plainAt, steeredAt := map[string]int{}, map[string]int{}
	for k, it := range plain.Items {
		plainAt[it.ItemID] = k
	}
	for k, it := range steered.Items {
		steeredAt[it.ItemID] = k
	}
	for _, it := range plain.Items {
		change := "kept"
		if _, ok := steeredAt[it.ItemID]; !ok {
			change = "removed"
			w.removed++
		}
		w.plain = append(w.plain, previewRow{Item: it.ItemID, Change: change})
	}
	for k, it := range steered.Items {
		rules := strings.Join(it.Rules, " ")
		mark := previewMark{Item: it.ItemID, Chips: rules}
		change := "same"
		if was, ok := plainAt[it.ItemID]; !ok {
			change, mark.Mark = "added", "added"
			w.added++
		} else if was != k {
			change = "moved"
			w.moved++
			mark.Title = fmt.Sprintf("#%d without steering", was+1)
			if was > k {
				mark.Mark, mark.Class = fmt.Sprintf("↑ %d", was-k), "move-up"
				w.movedUp++
			} else {
				mark.Mark, mark.Class = fmt.Sprintf("↓ %d", k-was), "move-down"
				w.movedDown++
			}
			if len(it.Rules) > 0 {
				w.movedByRule++
			} else {
				w.movedAlong++
			}
		}
		if len(it.Rules) > 0 {
			w.ruled++
		}
		w.steered = append(w.steered, previewRow{Item: it.ItemID, Change: change, Rules: rules})
		w.marks = append(w.marks, mark)
	}
	w.summary = fmt.Sprintf("%d added, %d removed, %d moved; rules changed %d of the %d items.", w.added, w.removed, w.moved, w.ruled, len(steered.Items))
	return w
}

// checkPreview compares the preview on the page with w.
func (d *dash) checkPreview(w previewWant) {
	d.t.Helper()
	if got := d.previewRows("#preview-plain"); !slices.Equal(got, w.plain) {
		d.t.Errorf("the list without steering shows\n %v\nwant the API's\n %v", got, w.plain)
	}
	if got := d.previewRows("#preview-steered"); !slices.Equal(got, w.steered) {
		d.t.Errorf("the list with the placement shows\n %v\nwant the API's\n %v", got, w.steered)
	}
	if got := d.previewMarks(); !slices.Equal(got, w.marks) {
		d.t.Errorf("the list with the placement marks its changes\n %v\nwant\n %v", got, w.marks)
	}
	if got := d.text("#preview-summary"); got != w.summary {
		d.t.Errorf("the preview's summary reads %q, want %q", got, w.summary)
	}
}

func TestDashboard_rules(t *testing.T) {
	start := time.Now()
	p := openRulesPage(t)
	d, user, call, blog := p.dash, p.user, p.call, p.log
	// The bad condition's 400 and the unknown user's 404 are the test's.
	blog.provoke(http.MethodPost, `^/admin/rules$`, 400)
	blog.provoke(http.MethodGet, `^/users/nobody-here$`, 404)

	// Create a rule through the form: boost sci-fi on the placement home,
	// from an hour ago for 30 days.
	now := time.Now().UTC()
	starts, ends := now.Add(-time.Hour).Truncate(time.Minute), now.Add(30*24*time.Hour).Truncate(time.Minute)
	const local = "2006-01-02T15:04"
	d.do("type the rule", 10*time.Second,
		chromedp.SendKeys(chromedp.CSS("#rule-name"), "scifi-up"),
		chromedp.SendKeys(chromedp.CSS("#rule-condition"), `"sci-fi" in categories`))
	d.setFields("fill the rule", "#rule-action", "boost", "#rule-factor", "2",
		"#rule-starts", starts.Format(local), "#rule-ends", ends.Format(local), "#rule-placements", "home")
	d.click("create the rule", "#rule-save")
	d.waitFor("the rule in the table", `#rules-list tr[data-rule="scifi-up"]`, 20*time.Second)
	row := `#rules-list tr[data-rule="scifi-up"] `
	utcMinute := func(t time.Time) string { return t.Format("2006-01-02 15:04") }
	for sel, want := range map[string]string{
		row + "td.rule-condition":  `"sci-fi" in categories`,
		row + "td.rule-action":     "boost × 2",
		row + "td.rule-window":     utcMinute(starts) + " → " + utcMinute(ends),
		row + "td.rule-placements": "home",
		row + "td.rule-state":      "active",
		"#rule-form-ok":            "Created rule scifi-up: active now.",
		"#rule-form-mode":          "New rule",
	} {
		if got := d.text(sel); got != want {
			t.Errorf("%s reads %q, want %q", sel, got, want)
		}
	}
	var rules api.RulesOut
	call(http.MethodGet, "/admin/rules", "", http.StatusOK, &rules)
	if len(rules.Rules) != 1 {
		t.Fatalf("GET /admin/rules lists %d rules, want the one created: %+v", len(rules.Rules), rules.Rules)
	}
	created := rules.Rules[0]
	if r := created; r.Name != "scifi-up" || r.Condition != `"sci-fi" in categories` || r.Action != "boost" || r.Factor != 2 ||
		r.StartsAt == nil || !r.StartsAt.Equal(starts) || r.EndsAt == nil || !r.EndsAt.Equal(ends) ||
		!slices.Equal(r.Placements, []string{"home"}) || !r.Active {
		t.Errorf("the stored rule is %+v, want the form's", r)
	}
	d.step("a rule created through the form")

	// A condition that does not compile: the API's problem shows under the
	// condition field, and nothing is stored.
	const broken = `{"name":"broken","condition":"\"sci-fi\" in","action":"exclude","placements":[]}`
	var apiErr api.ErrorOut
	call(http.MethodPost, "/admin/rules", broken, http.StatusBadRequest, &apiErr)
	if len(apiErr.Error.Details) != 1 || apiErr.Error.Details[0].Field != "condition" || !strings.Contains(apiErr.Error.Details[0].Problem, "line 1, column") {
		t.Fatalf("POST /admin/rules with a broken condition: %+v, want a condition error naming its position", apiErr.Error)
	}
	d.do("type the broken rule", 10*time.Second,
		chromedp.SendKeys(chromedp.CSS("#rule-name"), "broken"),
		chromedp.SendKeys(chromedp.CSS("#rule-condition"), `"sci-fi" in`))
	d.setFields("pick exclude", "#rule-action", "exclude")
	d.click("save the broken rule", "#rule-save")
	d.wait("the condition's error", `document.querySelector('#rule-condition-error')?.textContent`, 20*time.Second)
	if got, want := d.text("#rule-condition-error"), apiErr.Error.Details[0].Problem; got != want {
		t.Errorf("under the condition: %q, want the API's %q", got, want)
	}
	if got := evalJS[string](d, "aria-invalid", `document.querySelector('#rule-condition').getAttribute('aria-invalid') || ''`); got != "true" {
		t.Errorf("the condition field has aria-invalid=%q, want true", got)
	}
	if got := d.text("#rule-form-msg"); got != "" {
		t.Errorf("the form's message reads %q besides the field's error, want nothing", got)
	}
	call(http.MethodGet, "/admin/rules", "", http.StatusOK, &rules)
	if len(rules.Rules) != 1 || rules.Rules[0].Name != "scifi-up" {
		t.Errorf("after the broken rule GET /admin/rules lists %+v, want scifi-up alone", rules.Rules)
	}
	call(http.MethodGet, "/admin/rules/broken", "", http.StatusNotFound, nil)
	d.step("a broken condition's error under its field, nothing stored")

	// Edit the rule: the form takes its fields, and saving replaces it.
	d.click("edit the rule", row+"button.edit")
	d.wait("the form holds the rule", `document.querySelector('#rule-name').value === 'scifi-up' && document.querySelector('#rule-name').readOnly`, 10*time.Second)
	withSeconds := func(v string) string {
		if len(v) == len(local) {
			return v + ":00"
		}
		return v
	}
	form := evalJS[map[string]string](d, "the rule form", `Object.fromEntries(['condition', 'action', 'factor', 'starts', 'ends', 'placements', 'condition-error'].map((k) => {
		const el = document.querySelector('#rule-' + k);
		return [k, 'value' in el ? el.value : el.textContent];
	}))`)
	form["starts"], form["ends"] = withSeconds(form["starts"]), withSeconds(form["ends"])
	wantForm := map[string]string{"condition": `"sci-fi" in categories`, "action": "boost", "factor": "2",
		"starts": starts.Format(local + ":05"), "ends": ends.Format(local + ":05"), "placements": "home", "condition-error": ""}
	for k, want := range wantForm {
		if form[k] != want {
			t.Errorf("editing: the form's %s is %q, want %q", k, form[k], want)
		}
	}
	d.setFields("raise the factor", "#rule-factor", "3")
	d.click("save the rule", "#rule-save")
	d.wait("the table shows the edit", fmt.Sprintf(`document.querySelector(%q)?.textContent === 'boost × 3'`, row+"td.rule-action"), 20*time.Second)
	var edited api.RuleOut
	call(http.MethodGet, "/admin/rules/scifi-up", "", http.StatusOK, &edited)
	if edited.Factor != 3 || edited.Action != "boost" || edited.Condition != created.Condition || !edited.CreatedAt.Equal(created.CreatedAt) ||
		edited.UpdatedAt.Before(created.UpdatedAt) || !slices.Equal(edited.Placements, []string{"home"}) {
		t.Errorf("the edited rule is %+v, want factor 3 and the rest as created (%+v)", edited, created)
	}
	if got := d.text("#rule-form-ok"); got != "Saved rule scifi-up: active now." {
		t.Errorf("after saving the form says %q", got)
	}
	d.step("the rule edited through the form")

	// Create a placement through the form: itemknn, 8 items, no dramas,
	// at most 3 of a genre.
	d.do("type the placement", 10*time.Second, chromedp.SendKeys(chromedp.CSS("#placement-name"), "home"))
	d.setFields("fill the placement", "#placement-by", "model:itemknn", "#placement-n", "8",
		"#placement-filter", `not ("drama" in categories)`, "#placement-max", "3")
	d.click("create the placement", "#placement-save")
	d.waitFor("the placement in the table", `#placements-list tr[data-placement="home"]`, 20*time.Second)
	prow := `#placements-list tr[data-placement="home"] `
	for sel, want := range map[string]string{
		prow + "td.placement-by":        "model itemknn",
		prow + "td.placement-n":         "8",
		prow + "td.placement-filter":    `not ("drama" in categories)`,
		prow + "td.placement-rules":     "none listednamed by scifi-up",
		prow + "td.placement-max":       "3",
		prow + "td.placement-diversity": "–",
		"#placement-form-ok":            "Stored placement home.",
	} {
		if got := d.text(sel); got != want {
			t.Errorf("%s reads %q, want %q", sel, got, want)
		}
	}
	var place api.PlacementOut
	call(http.MethodGet, "/admin/placements/home", "", http.StatusOK, &place)
	if p := place; p.Model != "itemknn" || p.Experiment != "" || p.N != 8 || p.Filter != `not ("drama" in categories)` ||
		len(p.Rules) != 0 || p.MaxPerCategory != 3 || p.Diversity != nil {
		t.Errorf("the stored placement is %+v, want the form's", p)
	}
	d.step("a placement created through the form")

	// Preview the user's list without and with the placement: the page
	// shows exactly the API's two lists, and marks what changed.
	d.waitFor("the placement to preview", `#preview-placement option[value="home"]`, 10*time.Second)
	d.setFields("fill the preview", "#preview-user", user, "#preview-placement", "home")
	d.click("preview", "#preview-go")
	d.waitFor("the preview", "#preview-steered tr.preview-row", 20*time.Second)
	var plain, steered api.RecommendationsOut
	call(http.MethodGet, "/users/"+user+"/recommendations?n=8", "", http.StatusOK, &plain)
	call(http.MethodGet, "/users/"+user+"/recommendations?placement=home&explain=true", "", http.StatusOK, &steered)
	w := wantPreview(plain, steered)
	if len(plain.Items) != 8 || len(steered.Items) != 8 || w.ruled == 0 || w.added+w.moved == 0 {
		t.Fatalf("the data do not exercise the preview: %d and %d items, %d changed by a rule, %d added, %d moved",
			len(plain.Items), len(steered.Items), w.ruled, w.added, w.moved)
	}
	d.checkPreview(w)
	if got, want := evalJS[string](d, "the route", `location.hash`), "#/rules?user="+user+"&placement=home"; got != want {
		t.Errorf("the preview's route is %q, want %q", got, want)
	}
	d.step(fmt.Sprintf("the preview: %d added, %d removed, %d moved, %d changed by a rule", w.added, w.removed, w.moved, w.ruled))
	d.fitsWidth("#/rules at 1280px")
	d.screenshot("rules", 2000)

	// The page at a phone's width, the preview opened from its route.
	d.setViewport(390, 844, true)
	d.open("#/users", "#user-id")
	d.open("#/rules?user="+user+"&placement=home", "#preview-steered tr.preview-row")
	d.fitsWidth("#/rules at 390px")
	if got := d.previewRows("#preview-steered"); !slices.Equal(got, w.steered) {
		t.Errorf("the preview opened from its route shows\n %v\nwant\n %v", got, w.steered)
	}
	d.setViewport(1280, 900, false)
	d.step("the page at 390px")

	// A user that does not exist: the server's error, not a blank.
	var noUser api.ErrorOut
	call(http.MethodGet, "/users/nobody-here", "", http.StatusNotFound, &noUser)
	d.setFields("an unknown user", "#preview-user", "nobody-here")
	d.click("preview the unknown user", "#preview-go")
	d.waitFor("the unknown user's error", "#preview .error", 20*time.Second)
	if got := d.text("#preview .error .error-head"); got != "404 "+noUser.Error.Code+" "+noUser.Error.Message {
		t.Errorf("the preview of an unknown user reads %q, want the API's 404 %s %q", got, noUser.Error.Code, noUser.Error.Message)
	}
	if evalJS[bool](d, "no lists", `!!document.querySelector('#preview-plain, #preview-steered')`) {
		t.Error("the preview of an unknown user still shows lists")
	}
	d.step("an unknown user's error")

	// Delete the rule: one click asks, Cancel keeps it, the second click on
	// Confirm delete removes it.
	d.click("delete the rule", row+"button.delete")
	d.waitFor("the confirmation", row+"button.confirm-delete", 10*time.Second)
	call(http.MethodGet, "/admin/rules/scifi-up", "", http.StatusOK, nil)
	d.click("cancel", row+"button.cancel-delete")
	d.waitFor("the delete button again", row+"button.delete", 10*time.Second)
	call(http.MethodGet, "/admin/rules/scifi-up", "", http.StatusOK, nil)
	d.click("delete the rule again", row+"button.delete")
	d.click("confirm the delete", row+"button.confirm-delete")
	d.wait("the rule is gone", `!document.querySelector('#rules-list tr[data-rule]') && document.querySelector('#rules-list')?.textContent.includes('No rules yet')`, 20*time.Second)
	call(http.MethodGet, "/admin/rules/scifi-up", "", http.StatusNotFound, nil)
	call(http.MethodGet, "/admin/rules", "", http.StatusOK, &rules)
	if len(rules.Rules) != 0 {
		t.Errorf("after the delete GET /admin/rules lists %+v, want none", rules.Rules)
	}
	d.step("the rule deleted with the two-step confirmation")

	// Edit the placement: the active model, 5 items, diversity 0.5.
	d.click("edit the placement", prow+"button.edit")
	d.wait("the form holds the placement", `document.querySelector('#placement-name').value === 'home' && document.querySelector('#placement-name').readOnly`, 10*time.Second)
	pform := evalJS[map[string]string](d, "the placement form", `Object.fromEntries(['by', 'n', 'filter', 'rules', 'max', 'diversity'].map((k) => [k, document.querySelector('#placement-' + k).value]))`)
	wantPForm := map[string]string{"by": "model:itemknn", "n": "8", "filter": `not ("drama" in categories)`, "rules": "", "max": "3", "diversity": ""}
	for k, want := range wantPForm {
		if pform[k] != want {
			t.Errorf("editing: the placement form's %s is %q, want %q", k, pform[k], want)
		}
	}
	d.setFields("change the placement", "#placement-by", "", "#placement-n", "5", "#placement-diversity", "0.5")
	d.click("save the placement", "#placement-save")
	d.wait("the table shows the edit", fmt.Sprintf(`document.querySelector(%q)?.textContent === '5'`, prow+"td.placement-n"), 20*time.Second)
	if got := d.text(prow + "td.placement-by"); got != "the active model" {
		t.Errorf("the edited placement is answered by %q, want the active model", got)
	}
	var editedPlace api.PlacementOut // fresh: the answer leaves out an empty model
	call(http.MethodGet, "/admin/placements/home", "", http.StatusOK, &editedPlace)
	if p := editedPlace; p.Model != "" || p.N != 5 || p.Filter != `not ("drama" in categories)` || p.MaxPerCategory != 3 || p.Diversity == nil || *p.Diversity != 0.5 {
		t.Errorf("the edited placement is %+v, want the active model, n 5, diversity 0.5 and the rest as before", p)
	}
	d.step("the placement edited through the form")

	// Delete the placement, with the same confirmation.
	d.click("delete the placement", prow+"button.delete")
	d.waitFor("the confirmation", prow+"button.confirm-delete", 10*time.Second)
	call(http.MethodGet, "/admin/placements/home", "", http.StatusOK, nil)
	d.click("confirm the delete", prow+"button.confirm-delete")
	d.wait("the placement is gone", `!document.querySelector('#placements-list tr[data-placement]') && !document.querySelector('#preview-placement option[value="home"]')`, 20*time.Second)
	call(http.MethodGet, "/admin/placements/home", "", http.StatusNotFound, nil)
	d.step("the placement deleted with the two-step confirmation")

	time.Sleep(300 * time.Millisecond) // late events
	blog.mu.Lock()
	keyedRequests := blog.keyed
	blog.mu.Unlock()
	if keyedRequests == 0 {
		t.Error("no request carried the key")
	}
	for _, p := range blog.list() {
		t.Error(p)
	}
	t.Logf("the Rules page test took %v", time.Since(start).Round(time.Millisecond))
}

// TestDashboard_rulesMoved previews a placement whose two pin rules
// reorder the user's own list: one takes the sixth item to the top, the
// other the first item to the fourth place, so the items between them
// move along without a rule and the rest keep their ranks. The page must
// mark exactly the items whose rank changed as moved, with the rules
// that moved them, and count them in its summary.
func TestDashboard_rulesMoved(t *testing.T) {
	p := openRulesPage(t)
	d := p.dash
	const n = 8
	var plain api.RecommendationsOut
	p.call(http.MethodGet, fmt.Sprintf("/users/%s/recommendations?n=%d", p.user, n), "", http.StatusOK, &plain)
	if len(plain.Items) != n {
		t.Fatalf("the user's list has %d items, want %d", len(plain.Items), n)
	}
	top, fourth := plain.Items[5].ItemID, plain.Items[0].ItemID
	pin := func(name, item string, position int) string {
		b, _ := json.Marshal(map[string]any{"name": name, "condition": fmt.Sprintf("id == %q", item), "action": "pin",
			"position": position, "placements": []string{"pinned"}})
		return string(b)
	}
	p.call(http.MethodPost, "/admin/rules", pin("pin-top", top, 1), http.StatusCreated, nil)
	p.call(http.MethodPost, "/admin/rules", pin("pin-fourth", fourth, 4), http.StatusCreated, nil)
	p.call(http.MethodPut, "/admin/placements/pinned", fmt.Sprintf(`{"n":%d}`, n), http.StatusCreated, nil)
	var steered api.RecommendationsOut
	p.call(http.MethodGet, "/users/"+p.user+"/recommendations?placement=pinned&explain=true", "", http.StatusOK, &steered)
	// The plain list again: the rules name only the placement.
	var again api.RecommendationsOut
	p.call(http.MethodGet, fmt.Sprintf("/users/%s/recommendations?n=%d", p.user, n), "", http.StatusOK, &again)
	if !slices.EqualFunc(plain.Items, again.Items, func(a, b api.ScoredItem) bool { return a.ItemID == b.ItemID }) {
		t.Fatalf("the rules changed the list without the placement: %v, then %v", plain.Items, again.Items)
	}
	w := wantPreview(plain, steered)
	if len(steered.Items) != n || w.added+w.removed != 0 || w.movedUp == 0 || w.movedDown == 0 ||
		w.movedByRule != 2 || w.movedAlong == 0 || w.moved == n {
		t.Fatalf("the data do not exercise the moves: %d items, %d added, %d removed, %d moved (%d up, %d down, %d by a rule, %d along)",
			len(steered.Items), w.added, w.removed, w.moved, w.movedUp, w.movedDown, w.movedByRule, w.movedAlong)
	}
	d.step("two pin rules and the placement stored")

	// The route opens the preview once the page has read the placements.
	d.open("#/users", "#user-id")
	d.open("#/rules?user="+p.user+"&placement=pinned", "#preview-steered tr.preview-row")
	d.checkPreview(w)
	var movedItems []string
	for _, r := range w.steered {
		if r.Change == "moved" {
			movedItems = append(movedItems, r.Item)
		}
	}
	marked := evalJS[[]string](d, "the moved rows", `[...document.querySelectorAll('#preview-steered tr.preview-row[data-change="moved"]')].map((tr) => tr.dataset.item)`)
	if !slices.Equal(marked, movedItems) {
		t.Errorf("the rows marked moved are %v, want the items whose rank changed, %v", marked, movedItems)
	}
	d.step(fmt.Sprintf("the preview: %d moved (%d up, %d down, %d by a rule), %d the same", w.moved, w.movedUp, w.movedDown, w.movedByRule, n-w.moved))
	d.fitsWidth("#/rules with moves at 1280px")

	time.Sleep(300 * time.Millisecond) // late events
	for _, problem := range d.log.list() {
		t.Error(problem)
	}
}
