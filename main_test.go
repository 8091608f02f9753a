package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestUsage_everyCommand checks that the usage text and the package
// comment of main.go each list every command, one line per command, and
// no other.
func TestUsage_everyCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	for what, text := range map[string]string{"usage": usage, "package comment": doc} {
		for line := range strings.Lines(text) {
			if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "recsys" && commands[fields[1]] == nil {
				t.Errorf("the %s lists %q, which is no command", what, fields[1])
			}
		}
	}
	for name := range commands {
		for what, text := range map[string]string{"usage": usage, "package comment": doc} {
			n := 0
			for line := range strings.Lines(text) {
				if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "recsys" && fields[1] == name {
					n++
				}
			}
			if n != 1 {
				t.Errorf("the %s lists command %q on %d lines, want 1", what, name, n)
			}
		}
	}
}
