package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// configurationDocPath is the configuration reference that
// TestConfigurationDoc generates from the flag sets.
const configurationDocPath = "docs/configuration.md"

// configurationDocIntro opens the configuration reference.
const configurationDocIntro = `# Configuration

This page is the reference of recsys's settings: every flag of ` + "`recsys serve`" + `
with the environment variable that gives its default, the default and what
it does; the environment variables the service reads that no flag sets; and
the flags of the other commands. A flag given on the command line wins over
its variable, and the variable over the built-in default. A boolean flag's
variable is ` + "`1`" + ` for true and ` + "`0`" + ` for false, any other value leaving the
default; a numeric or duration variable that does not parse is ignored.
Durations are written as Go durations (` + "`90s`, `30m`, `24h`" + `). The page is
generated from the flag definitions: ` + "`go test -run TestConfigurationDoc .`" + `
fails when it and the flags differ, and
` + "`RECSYS_UPDATE_DOCS=1 go test -run TestConfigurationDoc .`" + ` rewrites it, so
change the flags (or, for the environment-only variables,
` + "`configuration_doc_test.go`" + `) rather than this file.
`

// envOnly are the environment variables the service reads that no flag
// sets. TestConfigurationDoc fails when the source reads a RECSYS_
// variable that is neither a serve flag's nor listed here, or when one
// listed here is read nowhere.
var envOnly = []struct{ name, readBy, def, meaning string }{
	{recsys.EnvEASEMaxDense, "serve, train, eval, scale", fmt.Sprintf("`%d`", recsys.DefaultEASEMaxDense),
		fmt.Sprintf("the largest number of items (with a training positive) that EASE fits with its dense closed form, "+
			"which takes 12·m² bytes at the peak of a fit for m items and serves a model of 4·m² bytes; "+
			"above it EASE fits its sparse variant. At most %d; a model's `max_dense` setting overrides it, "+
			"and a value that is not an integer in that range fails the fit", recsys.EASEMaxDenseCap)},
	{recsys.EnvEASENeighbours, "serve, train, eval, scale", fmt.Sprintf("`%d`", recsys.DefaultEASENeighbours),
		"how many of an item's most similar items (by cosine) the sparse EASE variant regresses its column on: " +
			"memory grows with it linearly, fitting time with its cube. 0 means the default; a model whose " +
			"parameters set k overrides it, and a value that is not an integer from 0 to 2²⁰ fails the fit"},
}

// TestConfigurationDoc keeps docs/configuration.md equal to what the flag
// sets say: a flag added, removed or renamed, a default or an environment
// variable changed, makes it fail until the page is regenerated.
func TestConfigurationDoc(t *testing.T) {
	update := os.Getenv("RECSYS_UPDATE_DOCS") == "1"
	clearRecsysEnv(t)
	want := configurationDoc(t)
	if update {
		if err := os.WriteFile(configurationDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", configurationDocPath)
		return
	}
	got, err := os.ReadFile(configurationDocPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s differs from the flags (- the page, + the flags):\n%s\nregenerate it with: RECSYS_UPDATE_DOCS=1 go test -run TestConfigurationDoc .",
			configurationDocPath, lineDiff(string(got), want))
	}
}

// TestConfigurationDoc_envVarsDocumented: every RECSYS_ variable that the
// program's source names is a serve flag's or an environment-only one of
// the page, and every environment-only one is still read somewhere.
func TestConfigurationDoc_envVarsDocumented(t *testing.T) {
	var c Config
	var v serveValues
	documented := map[string]bool{}
	for _, env := range newServeFlags(&c, &v, io.Discard).env {
		documented[env] = true
	}
	for _, e := range envOnly {
		documented[e.name] = true
	}
	read := sourceEnvVars(t)
	for _, name := range read {
		if !documented[name] {
			t.Errorf("the source reads %s, which %s does not document: add it to envOnly in configuration_doc_test.go", name, configurationDocPath)
		}
	}
	for _, e := range envOnly {
		if !slices.Contains(read, e.name) {
			t.Errorf("envOnly lists %s, which no source file names", e.name)
		}
	}
}

// TestServeFlags_usageNamesEnv: every serve flag whose default comes from a
// variable names that variable in its usage, so that -h tells it too.
func TestServeFlags_usageNamesEnv(t *testing.T) {
	var c Config
	var v serveValues
	fs := newServeFlags(&c, &v, io.Discard)
	if len(fs.env) == 0 {
		t.Fatal("no serve flag has an environment variable")
	}
	for name, env := range fs.env {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("%s is recorded for --%s, which serve does not define", env, name)
			continue
		}
		if !strings.Contains(f.Usage, "env "+env) {
			t.Errorf("--%s takes its default from %s, but its usage does not say so: %q", name, env, f.Usage)
		}
	}
}

// TestServeFlags_boolEnv: a boolean flag's variable is 1 for true and 0
// for false; any other value leaves the flag's default.
func TestServeFlags_boolEnv(t *testing.T) {
	for _, tc := range []struct {
		env, value string
		get        func(Config) bool
		want       bool
	}{
		{"RECSYS_INSECURE", "1", func(c Config) bool { return c.Insecure }, true},
		{"RECSYS_INSECURE", "0", func(c Config) bool { return c.Insecure }, false},
		{"RECSYS_INSECURE", "yes", func(c Config) bool { return c.Insecure }, false},
		{"RECSYS_ONLINE", "0", func(c Config) bool { return !c.Online.Off }, false},
		{"RECSYS_ONLINE", "1", func(c Config) bool { return !c.Online.Off }, true},
		{"RECSYS_ONLINE", "false", func(c Config) bool { return !c.Online.Off }, true},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			c, err := parseServeFlags(nil, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.get(c); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// clearRecsysEnv unsets every RECSYS_ variable for the rest of the test,
// so that the defaults are the built-in ones (and no key is printed).
func clearRecsysEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "RECSYS_") {
			t.Setenv(name, "") // restores the value when the test ends
			if err := os.Unsetenv(name); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// configurationDoc generates docs/configuration.md from the flag sets.
func configurationDoc(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(configurationDocIntro)

	b.WriteString("\n## `recsys serve`\n\n")
	b.WriteString("| Flag | Environment | Default | Meaning |\n|---|---|---|---|\n")
	var c Config
	var v serveValues
	fs := newServeFlags(&c, &v, io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if typ != "" {
			name += " " + typ
		}
		env := fs.env[f.Name]
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", docCode(name), docCode(env), docCode(f.DefValue),
			docCell(withoutEnv(usage, env)))
	})

	b.WriteString("\n## Environment-only variables\n\n")
	b.WriteString("| Variable | Read by | Default | Meaning |\n|---|---|---|---|\n")
	for _, e := range envOnly {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", docCode(e.name), e.readBy, e.def, docCell(e.meaning))
	}

	b.WriteString("\n## Other commands\n\n")
	b.WriteString("Each command's flags as `recsys COMMAND --help` prints them, with no\n`RECSYS_` variable set.\n")
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		if name == "serve" {
			continue
		}
		var help bytes.Buffer
		if err := run(t.Context(), []string{name, "-h"}, io.Discard, &help); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("recsys %s -h: %v, want flag.ErrHelp", name, err)
		}
		_, flags, _ := strings.Cut(help.String(), "\n")         // drop "Usage of recsys NAME:"
		flags = strings.ReplaceAll(flags, "    \t", "        ") // flag indents usages with a tab
		fmt.Fprintf(&b, "\n### `recsys %s`\n\n```text\n%s```\n", name, flags)
	}
	return b.String()
}

// withoutEnv removes the mention of the variable env from a flag's usage,
// which the table gives a column of its own: "(env X)", "(env X=1)" and
// "(env X=0 turns it off)" go, and "(…; env X)" keeps its first part.
func withoutEnv(usage, env string) string {
	if env == "" {
		return usage
	}
	if i := strings.Index(usage, " (env "+env); i >= 0 {
		if j := strings.Index(usage[i:], ")"); j >= 0 {
			return usage[:i] + usage[i+j+1:]
		}
	}
	return strings.Replace(usage, "; env "+env+")", ")", 1)
}

// docCode is s as inline code in a table cell, or "none" when s is empty.
func docCode(s string) string {
	if s == "" {
		return "none"
	}
	return "`" + docCell(s) + "`"
}

// docCell escapes the pipes of a Markdown table cell.
func docCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// sourceEnvVars returns, sorted, the RECSYS_ variables that the program's
// Go source names as string literals: test files and test-helper packages
// (folders named *test, such as storage/postgres/pgtest) are left out.
func sourceEnvVars(t *testing.T) []string {
	t.Helper()
	lit := regexp.MustCompile(`"(RECSYS_[A-Z0-9_]+)"`)
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(d.Name(), "test") ||
			d.Name() == "testdata" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllSubmatch(src, -1) {
			seen[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("no RECSYS_ variable found in the source")
	}
	return slices.Sorted(maps.Keys(seen))
}

// lineDiff lists the lines of a and b that differ, "-" for a's and "+" for
// b's, each with its line number; the lines of a longest common
// subsequence are left out.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	// lcs[i][j] is the length of a longest common subsequence of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	for i, j := 0, 0; i < len(x) || j < len(y); {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "-%d: %s\n", i+1, x[i])
			i++
		default:
			fmt.Fprintf(&out, "+%d: %s\n", j+1, y[j])
			j++
		}
	}
	return out.String()
}
