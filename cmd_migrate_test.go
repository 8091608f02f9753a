package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/bolttest"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// TestMigrate_command runs `recsys migrate` from a bbolt file into
// PostgreSQL and from there into a new file: each run prints the counts
// and the verified checksum, the same both ways, and the final file
// answers every read as the first and holds the same bytes in every
// bucket. Into a database that holds data, from a
// missing file, or to the same database it refuses, changing nothing.
func TestMigrate_command(t *testing.T) {
	dir := t.TempDir()
	first, back := filepath.Join(dir, "first.db"), filepath.Join(dir, "back.db")
	filledFile(t, first)
	dsn := pgtest.Schema(t)

	migrateOK := func(from, to string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := runMain(context.Background(), []string{"migrate", "--from", from, "--to", to}, &out, &errOut); code != 0 {
			t.Fatalf("migrate %s → %s: exit %d: %s", from, to, code, errOut.String())
		}
		s := out.String()
		if !strings.Contains(s, "verified") || !strings.Contains(s, "16 users") {
			t.Fatalf("migrate printed %q", s)
		}
		sum, _, _ := strings.Cut(s[strings.Index(s, "sha256 "):], "\n")
		return sum
	}
	there := migrateOK(first, dsn)
	again := migrateOK(dsn, back)
	if there != again {
		t.Fatalf("checksums differ: %s / %s", there, again)
	}
	a, err := storage.Open(first, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := storage.Open(back, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storagetest.Compare(t, a, b)
	// Through PostgreSQL and back, the file holds what it held, to the
	// byte, but for the meta keys naming each file's own event log.
	if diff := bolttest.Diff(bolttest.File(t, first).Without("meta", "log/"), bolttest.File(t, back).Without("meta", "log/"), nil); diff != nil {
		t.Fatalf("the file back from PostgreSQL differs: %v", diff)
	}

	for _, c := range []struct {
		name     string
		args     []string
		want     string
		noTarget string // a file that must not appear
	}{
		{"into data", []string{"--from", first, "--to", dsn}, "already holds data", ""},
		{"missing source", []string{"--from", filepath.Join(dir, "none.db"), "--to", filepath.Join(dir, "new.db")}, "no database at", filepath.Join(dir, "new.db")},
		{"same database", []string{"--from", first, "--to", first}, "same database", ""},
		{"no target", []string{"--from", first}, "needs --from DB and --to DB", ""},
	} {
		var out, errOut bytes.Buffer
		if code := runMain(context.Background(), append([]string{"migrate"}, c.args...), &out, &errOut); code != 1 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.name, code, errOut.String(), c.want)
		}
		if c.noTarget != "" {
			if _, err := os.Stat(c.noTarget); err == nil {
				t.Errorf("%s: left %s behind", c.name, c.noTarget)
			}
		}
	}
}

// filledFile writes storagetest.Fill's records (seed 4) into a new bbolt
// file at path, at a fixed time.
func filledFile(tb testing.TB, path string) {
	tb.Helper()
	now := time.Date(2026, 3, 8, 9, 10, 11, 12, time.UTC)
	st, err := storage.Open(path, storage.Options{Now: func() time.Time { return now }})
	if err != nil {
		tb.Fatal(err)
	}
	storagetest.Fill(tb, st, 4)
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestMigrate_onlineData fills a bbolt server through the online service
// over HTTP (an experiment run and stopped, a second one running,
// recommendation lists shown, clicks credited by id and by window), then
// migrates its file into PostgreSQL and back, and into a new file
// directly. Each copy holds every impression, credit, counter and
// experiment: the migrate line counts them (and names the bbolt event
// log's raw history as not copied), the file back holds the
// original's bytes in every bucket, and servers on the copies give the
// same experiment reports and online report, credit a click on a list
// shown before the copy once, and not a click credited before it again.
func TestMigrate_onlineData(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first.db")
	a := startApp(t, func(c *Config) { c.DB = first })
	if st := a.postJSON(t, "/interactions", rawJSON(contractEvents(40, 24, 6)), nil); st != 201 {
		t.Fatalf("POST /interactions: %d", st)
	}
	var job api.JobAccepted
	if st := a.postJSON(t, "/admin/retrain", map[string]any{"models": []string{"itemknn"}}, &job); st != 202 {
		t.Fatalf("retrain: %d", st)
	}
	waitJobDone(t, a, job.JobID)
	if st, body := a.do(t, "PUT", "/admin/placements/home", "application/json", []byte(`{}`)); st != 201 {
		t.Fatalf("PUT /admin/placements/home: %d %s", st, body)
	}
	arms := []map[string]any{{"model": "popular", "share": 50}, {"model": "itemknn", "share": 50}}
	// Odd users' lists are the home placement's.
	show := func(users int) []api.RecommendationsOut {
		var out []api.RecommendationsOut
		for u := range users {
			var rec api.RecommendationsOut
			path := fmt.Sprintf("/users/u%d/recommendations?n=5", u)
			if u%2 == 1 {
				path += "&placement=home"
			}
			if st := a.getJSON(t, path, &rec); st != 200 || rec.RecommendationID == "" {
				t.Fatalf("u%d: %d %+v", u, st, rec)
			}
			out = append(out, rec)
		}
		return out
	}
	click := func(rec api.RecommendationsOut, item int, byID bool) int {
		ev := map[string]string{"user_id": rec.UserID, "item_id": rec.Items[item].ItemID, "type": "click"}
		if byID {
			ev["recommendation_id"] = rec.RecommendationID
		}
		var out api.InteractionsOut
		if st := a.postJSON(t, "/interactions", map[string]any{"interactions": []map[string]string{ev}}, &out); st != 201 {
			t.Fatalf("click: %d", st)
		}
		return out.Attributed
	}
	var x1, x2 api.ExperimentOut
	if st := a.postJSON(t, "/admin/experiments", map[string]any{"name": "first", "arms": arms}, &x1); st != 201 {
		t.Fatalf("POST /admin/experiments: %d", st)
	}
	lists := show(20)
	credited := 0
	for k, rec := range lists[:10] {
		credited += click(rec, k%5, k%2 == 0)
	}
	if st := a.postJSON(t, "/admin/experiments/"+x1.ID+"/stop", nil, &x1); st != 200 {
		t.Fatalf("stop: %d", st)
	}
	if st := a.postJSON(t, "/admin/experiments", map[string]any{"name": "second", "arms": arms, "min_impressions": 50}, &x2); st != 201 {
		t.Fatalf("POST /admin/experiments: %d", st)
	}
	lists = append(lists, show(15)...)
	credited += click(lists[len(lists)-1], 0, true)
	if credited != 11 {
		t.Fatalf("%d of 11 clicks credited", credited)
	}
	read := func(b *testApp) (exps api.ExperimentsOut, reports []api.ExperimentOut, online api.OnlineReportOut) {
		t.Helper()
		if st := b.getJSON(t, "/admin/experiments", &exps); st != 200 || len(exps.Experiments) != 2 {
			t.Fatalf("GET /admin/experiments: %d %+v", st, exps)
		}
		for _, id := range []string{x1.ID, x2.ID} {
			var r api.ExperimentOut
			if st := b.getJSON(t, "/admin/experiments/"+id, &r); st != 200 {
				t.Fatalf("GET /admin/experiments/%s: %d", id, st)
			}
			reports = append(reports, r)
		}
		if st := b.getJSON(t, "/admin/online", &online); st != 200 || len(online.Totals) == 0 {
			t.Fatalf("GET /admin/online: %d %+v", st, online)
		}
		return exps, reports, online
	}
	wantExps, wantReports, wantOnline := read(a)
	// By hand: 10 + 7 odd users' lists of 5 items for home, 10 + 8 for
	// none; the clicks of the first 10 lists fall on 5 of each, the last
	// list's, u14's, on one without a placement.
	if p := wantOnline.Placements; len(p) != 2 || p[0].Placement != "" || p[0].Lists != 18 || p[0].Impressions != 90 || p[0].Clicks != 6 ||
		p[1].Placement != "home" || p[1].Lists != 17 || p[1].Impressions != 85 || p[1].Clicks != 5 {
		t.Fatalf("placements before the copy: %+v, want 18 lists, 90 shown, 6 clicks without one, 17, 85, 5 for home", p)
	}
	a.stopNow(t) // writes the impression log's queue

	dsn := pgtest.Schema(t)
	back, direct := filepath.Join(dir, "back.db"), filepath.Join(dir, "direct.db")
	for _, c := range [][2]string{{first, dsn}, {dsn, back}, {first, direct}} {
		var out, errOut bytes.Buffer
		if code := runMain(context.Background(), []string{"migrate", "--from", c[0], "--to", c[1]}, &out, &errOut); code != 0 {
			t.Fatalf("migrate %s → %s: exit %d: %s", c[0], c[1], code, errOut.String())
		}
		for _, want := range []string{"35 impressions", "11 attributions", "2 experiments", "verified"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("migrate %s → %s printed %q, want %q", c[0], c[1], out.String(), want)
			}
		}
		// What it does not carry, it names: a bbolt source's raw event log.
		if named := strings.Contains(out.String(), "not copied: the event log beside "+c[0]); named != (c[0] == first) {
			t.Errorf("migrate %s → %s printed %q: names the event log %v", c[0], c[1], out.String(), named)
		}
	}
	for _, to := range []string{back, direct} {
		if diff := bolttest.Diff(bolttest.File(t, first).Without("meta", "log/"), bolttest.File(t, to).Without("meta", "log/"), nil); diff != nil {
			t.Fatalf("%s differs from the original: %v", to, diff)
		}
	}

	for _, db := range []string{back, dsn} {
		b := startApp(t, func(c *Config) { c.DB = db })
		exps, reports, online := read(b)
		if !reflect.DeepEqual(exps, wantExps) || !reflect.DeepEqual(reports, wantReports) {
			t.Errorf("%s: the experiments differ:\n%+v\n%+v\nwant\n%+v\n%+v", postgres.Redact(db), exps, reports, wantExps, wantReports)
		}
		if !reflect.DeepEqual(online, wantOnline) {
			t.Errorf("%s: the online report differs:\n%+v\nwant\n%+v", postgres.Redact(db), online, wantOnline)
		}
		// A list shown before the copy is credited once, on the copy; one
		// credited before is not credited again.
		fresh, old := lists[12], lists[0]
		for _, c := range []struct {
			rec  api.RecommendationsOut
			item int
			want int
		}{{fresh, 1, 1}, {fresh, 1, 0}, {old, 0, 0}} {
			ev := map[string]string{"user_id": c.rec.UserID, "item_id": c.rec.Items[c.item].ItemID, "type": "click", "recommendation_id": c.rec.RecommendationID}
			var out api.InteractionsOut
			if st := b.postJSON(t, "/interactions", map[string]any{"interactions": []map[string]string{ev}}, &out); st != 201 || out.Attributed != c.want {
				t.Errorf("%s: click on %s position %d: %d, %d attributed; want %d", postgres.Redact(db), c.rec.RecommendationID, c.item, st, out.Attributed, c.want)
			}
		}
		var rec api.RecommendationsOut
		if st := b.getJSON(t, "/users/u1/recommendations?n=5", &rec); st != 200 || rec.Experiment != x2.ID {
			t.Errorf("%s: a recommendation on the copy: %d, experiment %q; want the running %s", postgres.Redact(db), st, rec.Experiment, x2.ID)
		}
		b.stopNow(t)
	}
}
