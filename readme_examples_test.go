package main

// TestReadmeExamples runs the API tour of README.md against live servers
// and compares every answer it shows with the answer the server gives.
//
// How the README is read:
//
//   - An example is a ```sh block holding one curl command, followed (with
//     only blank lines between) by a ```json block: the answer. Every
//     ```sh block that calls curl must have its answer, or be preceded by a
//     line <!-- not run: REASON -->, which skips it; every ```json block
//     must follow such a ```sh block.
//   - The data an example runs on is the last **demo** or **ml-100k** label
//     (the word in bold, a full stop or colon allowed inside the bold) in
//     the prose of its section, a section being what follows a heading;
//     an example without one fails. **demo** examples run in order on one
//     server started as `serve --demo` on a new database, once /readyz is
//     ready; **ml-100k** examples in order on one server on MovieLens 100K,
//     built by the ```sh block of the Quick start that imports it (its
//     import and train commands run through runMain, as the binary runs
//     them, and its serve command's flags start the server).
//   - The curl command is parsed, not run: -s/-S, -X METHOD, -H 'Name:
//     value' and -d BODY (which makes the request a POST and, as in curl,
//     form-encoded unless a Content-Type is given); localhost:8080 is the
//     test server.
//
// How an answer is compared: as JSON values. The string "…" matches any
// value; every other value must be there. Objects must have exactly the
// members shown, arrays exactly the elements shown in the order shown, and
// strings, booleans and null must be equal. A number written without a
// decimal point or exponent must equal the server's; a number written with
// d decimals matches a server number within half a unit of its last
// decimal (the server's number rounded to d decimals is the number shown),
// so that a block may show 0.2554 for 0.25543, and a number written with
// all the decimals the server sends must be that number.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
)

// readmeExample is one request of the README and the answer it shows.
type readmeExample struct {
	line    int    // the line of the ```sh block
	data    string // "demo" or "ml-100k"
	command string // the curl command as written
	answer  string // the ```json block
	skip    string // the reason of a <!-- not run: --> mark
}

// mdBlock is a fenced code block of a Markdown file, with the prose that
// precedes it since the previous block.
type mdBlock struct {
	line  int // the line of the opening fence, from 1
	lang  string
	text  string
	prose []string // the lines between the previous block and this one
}

// readBlocks splits a Markdown text into its fenced code blocks (fences may
// be indented, as inside a list item).
func readBlocks(md string) []mdBlock {
	var blocks []mdBlock
	var prose, code []string
	var cur *mdBlock
	for n, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(t, "```"):
			cur = &mdBlock{line: n + 1, lang: strings.TrimPrefix(t, "```"), prose: prose}
			prose, code = nil, nil
		case cur != nil && t == "```":
			cur.text = strings.Join(code, "\n")
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			code = append(code, line)
		default:
			prose = append(prose, line)
		}
	}
	return blocks
}

var (
	readmeLabel   = regexp.MustCompile(`\*\*(demo|ml-100k)[.:]?\*\*`)
	readmeNotRun  = regexp.MustCompile(`^<!-- not run: (.+?) -->$`)
	readmeHeading = regexp.MustCompile(`^#{1,6} `)
)

// readmeExamples finds every example of md, or the reasons it cannot.
func readmeExamples(md string) ([]readmeExample, []string) {
	blocks := readBlocks(md)
	var out []readmeExample
	var problems []string
	label := ""
	for k := 0; k < len(blocks); k++ {
		b := blocks[k]
		for _, l := range b.prose {
			if readmeHeading.MatchString(l) {
				label = ""
			}
			for _, m := range readmeLabel.FindAllStringSubmatch(l, -1) {
				label = m[1]
			}
		}
		if b.lang == "json" {
			problems = append(problems, fmt.Sprintf("README.md:%d: a ```json block that does not follow a ```sh block with a curl command", b.line))
			continue
		}
		if b.lang != "sh" || !callsCurl(b.text) {
			continue
		}
		ex := readmeExample{line: b.line, data: label, command: b.text}
		if last := lastNonBlank(b.prose); readmeNotRun.MatchString(last) {
			ex.skip = readmeNotRun.FindStringSubmatch(last)[1]
		}
		if k+1 < len(blocks) && blocks[k+1].lang == "json" && lastNonBlank(blocks[k+1].prose) == "" {
			ex.answer = blocks[k+1].text
			k++
		}
		switch {
		case ex.skip != "":
		case ex.answer == "":
			problems = append(problems, fmt.Sprintf("README.md:%d: a curl block with no ```json answer after it and no <!-- not run: REASON --> line before it", b.line))
			continue
		case ex.data == "":
			problems = append(problems, fmt.Sprintf("README.md:%d: an example with no **demo** or **ml-100k** label in its section", b.line))
			continue
		}
		out = append(out, ex)
	}
	return out, problems
}

func callsCurl(sh string) bool {
	for _, l := range strings.Split(sh, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "curl ") {
			return true
		}
	}
	return false
}

func lastNonBlank(lines []string) string {
	for k := len(lines) - 1; k >= 0; k-- {
		if t := strings.TrimSpace(lines[k]); t != "" {
			return t
		}
	}
	return ""
}

// shellWords splits a command as a POSIX shell would, for the quoting the
// README uses: single quotes, double quotes, backslashes and
// backslash-newline continuations. Expansions ($, backquotes) and
// operators (|, ;, &, <, >) are refused: the test could not run them.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case c == '\\' && k+1 < len(s) && s[k+1] == '\n':
			k++
		case c == '\\' && k+1 < len(s):
			w.WriteByte(s[k+1])
			inWord = true
			k++
		case c == '\'':
			end := strings.IndexByte(s[k+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed single quote")
			}
			w.WriteString(s[k+1 : k+1+end])
			inWord = true
			k += end + 1
		case c == '"':
			k++
			for ; k < len(s) && s[k] != '"'; k++ {
				switch {
				case s[k] == '$' || s[k] == '`':
					return nil, fmt.Errorf("an expansion in double quotes")
				case s[k] == '\\' && k+1 < len(s) && strings.IndexByte("\"\\$`", s[k+1]) >= 0:
					k++
				}
				w.WriteByte(s[k])
			}
			if k == len(s) {
				return nil, fmt.Errorf("unclosed double quote")
			}
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case strings.IndexByte("$`|;&<>()#", c) >= 0:
			return nil, fmt.Errorf("%q outside quotes", c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// curlRequest is what a curl command of the README asks for.
type curlRequest struct {
	method string
	target string // path and query
	header http.Header
	body   []byte
}

// parseCurl reads one curl command: -s and -S (no effect here), -X METHOD,
// -H 'Name: value' and -d BODY; its URL must name localhost:8080.
func parseCurl(cmd string) (curlRequest, error) {
	words, err := shellWords(cmd)
	if err != nil {
		return curlRequest{}, err
	}
	if len(words) == 0 || words[0] != "curl" {
		return curlRequest{}, fmt.Errorf("not one curl command")
	}
	r := curlRequest{header: http.Header{}}
	var rawURL string
	hasBody := false
	for k := 1; k < len(words); k++ {
		w := words[k]
		value := func(flag string) (string, error) {
			if len(w) > len(flag) {
				return w[len(flag):], nil
			}
			if k+1 == len(words) {
				return "", fmt.Errorf("%s needs a value", flag)
			}
			k++
			return words[k], nil
		}
		switch {
		case w == "-s" || w == "-S" || w == "-sS" || w == "--silent":
		case strings.HasPrefix(w, "-X"):
			if r.method, err = value("-X"); err != nil {
				return r, err
			}
		case strings.HasPrefix(w, "-H"):
			h, err := value("-H")
			if err != nil {
				return r, err
			}
			name, v, ok := strings.Cut(h, ":")
			if !ok {
				return r, fmt.Errorf("header %q has no colon", h)
			}
			r.header.Add(strings.TrimSpace(name), strings.TrimSpace(v))
		case strings.HasPrefix(w, "-d"):
			d, err := value("-d")
			if err != nil {
				return r, err
			}
			if strings.HasPrefix(d, "@") {
				return r, fmt.Errorf("-d %s reads a file", d)
			}
			if hasBody {
				d = string(r.body) + "&" + d // curl joins repeated -d with &
			}
			r.body, hasBody = []byte(d), true
		case strings.HasPrefix(w, "-"):
			return r, fmt.Errorf("curl option %s is not understood by the test", w)
		case rawURL != "":
			return r, fmt.Errorf("a second URL %s", w)
		default:
			rawURL = w
		}
	}
	if !strings.Contains(rawURL, "://") {
		rawURL = "http://" + rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return r, err
	}
	if u.Host != "localhost:8080" {
		return r, fmt.Errorf("the URL %s does not name localhost:8080", rawURL)
	}
	r.target = u.RequestURI()
	switch {
	case r.method != "":
	case hasBody:
		r.method = http.MethodPost
	default:
		r.method = http.MethodGet
	}
	if hasBody && r.header.Get("Content-Type") == "" {
		r.header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.header.Get("Accept") == "" {
		r.header.Set("Accept", "*/*")
	}
	return r, nil
}

// decodeNumbers decodes JSON keeping each number's text.
func decodeNumbers(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// jsonDiff lists where got differs from want under the conventions at the
// top of this file; path names the place ("items[2].score").
func jsonDiff(path string, want, got any) []string {
	if s, ok := want.(string); ok && s == "…" {
		return nil
	}
	mismatch := []string{fmt.Sprintf("%s: want %s, got %s", orRoot(path), compact(want), compact(got))}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return mismatch
		}
		var diffs []string
		for _, name := range sortedKeys(w) {
			if _, ok := g[name]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: missing (want %s)", path+"."+name, compact(w[name])))
				continue
			}
			diffs = append(diffs, jsonDiff(path+"."+name, w[name], g[name])...)
		}
		for _, name := range sortedKeys(g) {
			if _, ok := w[name]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: not in the README (got %s)", path+"."+name, compact(g[name])))
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return mismatch
		}
		var diffs []string
		for k := range w {
			diffs = append(diffs, jsonDiff(fmt.Sprintf("%s[%d]", path, k), w[k], g[k])...)
		}
		return diffs
	case json.Number:
		if g, ok := got.(json.Number); ok && numberMatches(string(w), string(g)) {
			return nil
		}
		return mismatch
	default:
		if want == got {
			return nil
		}
		return mismatch
	}
}

// numberMatches: a number written without a decimal point or exponent
// must be equal; one written with d decimals matches within half a unit of
// its d-th decimal. Both are read as exact decimals.
func numberMatches(want, got string) bool {
	w, ok1 := new(big.Rat).SetString(want)
	g, ok2 := new(big.Rat).SetString(got)
	if !ok1 || !ok2 {
		return false
	}
	dot := strings.IndexByte(want, '.')
	if dot < 0 || strings.ContainsAny(want, "eE") {
		return w.Cmp(g) == 0
	}
	decimals := int64(len(want) - dot - 1)
	half := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Mul(big.NewInt(2), new(big.Int).Exp(big.NewInt(10), big.NewInt(decimals), nil)))
	diff := new(big.Rat).Sub(g, w)
	return diff.Abs(diff).Cmp(half) <= 0
}

func orRoot(path string) string {
	if path == "" {
		return "the answer"
	}
	return path
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// runReadmeExample sends ex's request to a and reports every difference
// between its answer and the README's.
func runReadmeExample(t *testing.T, a *testApp, ex readmeExample) {
	t.Helper()
	req, err := parseCurl(ex.command)
	if err != nil {
		t.Errorf("README.md:%d: %v; mark the block <!-- not run: REASON --> if it cannot run", ex.line, err)
		return
	}
	want, err := decodeNumbers(ex.answer)
	if err != nil {
		t.Errorf("README.md:%d: the answer is not JSON: %v", ex.line, err)
		return
	}
	var header []string
	for name, vs := range req.header {
		header = append(header, name, vs[0])
	}
	status, body := a.do(t, req.method, req.target, "", req.body, header...)
	got, err := decodeNumbers(string(body))
	if err != nil {
		t.Errorf("README.md:%d: %s %s answered %d, not JSON: %q", ex.line, req.method, req.target, status, body)
		return
	}
	if diffs := jsonDiff("", want, got); len(diffs) > 0 {
		t.Errorf("README.md:%d (%s): %s %s answered %d:\n%s\nwhich differs from the README's answer:\n  %s",
			ex.line, ex.data, req.method, req.target, status, bytes.TrimSpace(body), strings.Join(diffs, "\n  "))
	}
}

// readmeServer starts the server of the README's serve command args (the
// database and address replaced by a temporary file and 127.0.0.1:0) and
// waits until /readyz is ready.
func readmeServer(t *testing.T, db string, args []string) *testApp {
	t.Helper()
	args = append(slices.Clone(args), "--db", db, "--addr", "127.0.0.1:0")
	c, err := parseServeFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("serve %s: %v", strings.Join(args, " "), err)
	}
	a := startApp(t, func(cfg *Config) { *cfg = c })
	deadline := time.Now().Add(3 * time.Minute)
	for {
		status, body := a.do(t, http.MethodGet, "/readyz", "", nil)
		if status == http.StatusOK {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve %s: /readyz still answers %d %s", strings.Join(args, " "), status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readmeMovieLensSteps returns the commands of the README's Quick start
// that load MovieLens 100K: the ```sh block that imports it, one
// `go run . COMMAND ARGS` a line.
func readmeMovieLensSteps(t *testing.T, md string) [][]string {
	t.Helper()
	for _, b := range readBlocks(md) {
		if b.lang != "sh" || !strings.Contains(b.text, "--format movielens") {
			continue
		}
		var steps [][]string
		for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
			words, err := shellWords(l)
			if err != nil || len(words) < 4 || words[0] != "go" || words[1] != "run" || words[2] != "." {
				t.Fatalf("README.md:%d: %q is not a `go run . COMMAND` line", b.line, l)
			}
			steps = append(steps, words[3:])
		}
		return steps
	}
	t.Fatal("README.md has no ```sh block that imports MovieLens (--format movielens)")
	return nil
}

// withDB replaces the value of --db in args by db and drops it when db is
// empty.
func withDB(args []string, db string) []string {
	var out []string
	for k := 0; k < len(args); k++ {
		if args[k] == "--db" && k+1 < len(args) {
			if db != "" {
				out = append(out, "--db", db)
			}
			k++
			continue
		}
		out = append(out, args[k])
	}
	return out
}

// TestReadmeExamples: every example of README.md answers what the README
// shows (the conventions are at the top of this file).
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	examples, problems := readmeExamples(md)
	for _, p := range problems {
		t.Error(p)
	}
	byData := map[string][]readmeExample{}
	skipped := 0
	for _, ex := range examples {
		if ex.skip != "" {
			skipped++
			t.Logf("README.md:%d: not run (%s)", ex.line, ex.skip)
			continue
		}
		byData[ex.data] = append(byData[ex.data], ex)
	}
	if len(byData["demo"]) == 0 || len(byData["ml-100k"]) == 0 {
		t.Fatalf("found %d demo and %d ml-100k examples in README.md: the parser no longer finds them", len(byData["demo"]), len(byData["ml-100k"]))
	}
	if raceEnabled {
		// Under the race detector a request costs about 16 times its CPU
		// time (kunn-i on MovieLens 100K: 0.07 ms, 1.1 ms under it), so
		// models that meet the default serving budget in a build without
		// it are over it there, and the first trainings would activate
		// other models than the README shows.
		t.Setenv("RECSYS_SERVE_BUDGET", "off")
	}
	ran := map[string]int{}
	t.Run("demo", func(t *testing.T) {
		// The README's demo server: the default models alone (auto mode
		// would add five, the slowest of the suite under -race).
		a := readmeServer(t, filepath.Join(t.TempDir(), "demo.db"), []string{"--demo", "--auto=false"})
		for _, ex := range byData["demo"] {
			runReadmeExample(t, a, ex)
			ran[ex.data]++
		}
	})
	t.Run("ml-100k", func(t *testing.T) {
		datasettest.Require(t, filepath.Join("..", "shared", "datasets", "ml-100k"))
		db := filepath.Join(t.TempDir(), "ml.db")
		var serve []string
		served := false
		for _, step := range readmeMovieLensSteps(t, md) {
			if !slices.Contains(step, "--db") {
				t.Fatalf("the README's MovieLens step %q names no --db", strings.Join(step, " "))
			}
			args := withDB(step, db)
			if step[0] == "serve" {
				serve, served = withDB(step[1:], ""), true
				continue
			}
			start := time.Now()
			if code, stdout, stderr := runCmd(t, args...); code != 0 {
				t.Fatalf("%s exited %d:\n%s%s", strings.Join(args, " "), code, stdout, stderr)
			}
			t.Logf("%s: %.1fs", strings.Join(args, " "), time.Since(start).Seconds())
		}
		if !served {
			t.Fatal("the README's MovieLens steps start no server (no `go run . serve` line)")
		}
		a := readmeServer(t, db, serve)
		for _, ex := range byData["ml-100k"] {
			runReadmeExample(t, a, ex)
			ran[ex.data]++
		}
	})
	t.Logf("README.md: ran %d examples (demo %d of %d, ml-100k %d of %d), skipped %d marked <!-- not run: -->",
		ran["demo"]+ran["ml-100k"], ran["demo"], len(byData["demo"]), ran["ml-100k"], len(byData["ml-100k"]), skipped)
}

// TestReadmeExamples_reading: the README reader finds pairs, labels and
// marks, and names every block it cannot use.
func TestReadmeExamples_reading(t *testing.T) {
	md := strings.Join([]string{
		"## One", "", "**demo.** First:", "", "```sh", "curl -s localhost:8080/healthz", "```", "",
		"```json", `{"status":"ok"}`, "```", "",
		"Still demo:", "", "```sh", "curl -s localhost:8080/readyz", "```", "", "No answer here.", "",
		"<!-- not run: it needs a key -->", "```sh", "curl -s localhost:8080/admin/jobs", "```", "",
		"```sh", "go run . serve", "```", "",
		"## Two", "", "```sh", "curl -s localhost:8080/version", "```", "", "```json", "{}", "```", "",
		"**ml-100k:**", "", "```json", "{}", "```", "",
	}, "\n")
	examples, problems := readmeExamples(md)
	var got []string
	for _, ex := range examples {
		got = append(got, fmt.Sprintf("%d %s %q", ex.line, ex.data, ex.skip))
	}
	if want := []string{`5 demo ""`, `22 demo "it needs a key"`}; !slices.Equal(got, want) {
		t.Errorf("examples %q, want %q", got, want)
	}
	wantProblems := []string{
		"README.md:15: a curl block with no ```json answer",
		"README.md:32: an example with no **demo** or **ml-100k** label",
		"README.md:42: a ```json block that does not follow",
	}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems %q, want %d", problems, len(wantProblems))
	}
	for k, p := range problems {
		if !strings.HasPrefix(p, wantProblems[k]) {
			t.Errorf("problem %q, want it to start %q", p, wantProblems[k])
		}
	}
}

// TestReadmeExamples_curl: commands become the requests curl would send.
func TestReadmeExamples_curl(t *testing.T) {
	r, err := parseCurl("curl -s -XPOST localhost:8080/users/a%2Fb/rerank -H 'Content-Type: application/json' \\\n  -d '{\"items\":[\"it'\\''s\"]}'")
	if err != nil {
		t.Fatal(err)
	}
	if r.method != "POST" || r.target != "/users/a%2Fb/rerank" || r.header.Get("Content-Type") != "application/json" || string(r.body) != `{"items":["it's"]}` {
		t.Errorf("got %+v %s", r, r.body)
	}
	r, err = parseCurl(`curl -d "a=1" 'localhost:8080/x?n=3&exclude=1,2'`)
	if err != nil {
		t.Fatal(err)
	}
	if r.method != "POST" || r.target != "/x?n=3&exclude=1,2" || r.header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("-d without -X or a Content-Type: got %+v", r)
	}
	for _, bad := range []string{"curl -s example.com/x", "curl -u k: localhost:8080/x", "curl localhost:8080/x | jq .", "curl -d @f localhost:8080/x", `curl -H "Authorization: Bearer $KEY" localhost:8080/x`} {
		if _, err := parseCurl(bad); err == nil {
			t.Errorf("%s: parsed, want an error", bad)
		}
	}
}

// TestReadmeExamples_compare: the answer's conventions, each way.
func TestReadmeExamples_compare(t *testing.T) {
	cases := []struct {
		want, got string
		ok        bool
	}{
		{`{"a":"…","b":[1,2]}`, `{"b":[1,2],"a":{"x":1}}`, true},
		{`{"a":"…"}`, `{}`, false},            // "…" stands for a value, not for its absence
		{`{"a":1}`, `{"a":1,"b":2}`, false},   // a member the README does not show
		{`["1","2"]`, `["2","1"]`, false},     // order counts
		{`["1","2"]`, `["1","2","3"]`, false}, // and length
		{`{"s":2.6126772348987846}`, `{"s":2.6126772348987846}`, true},
		{`{"s":2.6126772348987846}`, `{"s":2.6126772348987850}`, false},
		{`{"s":2.6127}`, `{"s":2.6126772348987846}`, true}, // rounded to 4 decimals
		{`{"s":2.612}`, `{"s":2.6126772348987846}`, false},
		{`{"s":501}`, `{"s":501}`, true},
		{`{"s":501}`, `{"s":501.2}`, false}, // no decimal point: equal
		{`{"s":1.0}`, `{"s":1}`, true},
		{`{"s":0}`, `{"s":"0"}`, false},
		{`{"b":false,"n":null}`, `{"b":false,"n":null}`, true},
		{`{"b":false}`, `{"b":null}`, false},
	}
	for _, c := range cases {
		w, err1 := decodeNumbers(c.want)
		g, err2 := decodeNumbers(c.got)
		if err1 != nil || err2 != nil {
			t.Fatal(c, err1, err2)
		}
		if diffs := jsonDiff("", w, g); (len(diffs) == 0) != c.ok {
			t.Errorf("%s against %s: differences %q, want match %v", c.want, c.got, diffs, c.ok)
		}
	}
}
