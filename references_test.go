package main

import (
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The citation forms of the comments (docs/references.md, "How comments
// cite"): a work is named by "dissertation", by "seed NNN", by an RFC
// number or by an author-year key; a place in a work (a section, equation,
// algorithm, table, definition or theorem number) belongs to the work named
// last before it in the same comment, or else to the default work that the
// package's doc comment names.
var (
	refName = `\p{Lu}\p{L}*\p{Ll}(?:-\p{Lu}\p{L}*\p{Ll})?`
	// refAuthorYear matches an author list followed by a year, bare or in
	// parentheses: one author, two joined by "and", the first author and
	// "et al.", or a longer list (which names no key: three or more authors
	// are cited by the first). Group 1 is the authors, group 2 the year.
	refAuthorYear = regexp.MustCompile(`((?:` + refName + `,\s+)*` + refName +
		`(?:\s+(?:and|&)\s+` + refName + `)?(?:\s+et\s+al\.)?)(?:'s)?\s+\(?((?:19|20)\d\d)\b`)
	// refYear is a year, which every author-year citation has.
	refYear = regexp.MustCompile(`\b(?:19|20)\d\d\b`)
	// refEtAl is an author named with "et al.", with or without a year.
	refEtAl = regexp.MustCompile(refName + `\s+et\s+al\.`)
	// refWork names a source document or a standard.
	refWork = regexp.MustCompile(`\b[Dd]issertation\b|\bseed\s+\d{3}\b|\bRFC\s+\d+\b`)
	// refPlace is a place in a work.
	refPlace = regexp.MustCompile(`(?:§\s*|\bEqs?\.\s*\(?|\bAlg\.\s*|\bAlgorithms?\s+|\bTables?\s+|` +
		`\bDef\.\s*|\bTheorem\s+|\bThm\.?\s+|\bCor\.\s*|\bAppendix\s+|\bch\.\s*|\bFig(?:ure|\.)\s*)\d+(?:\.\d+)*`)
	// refDefault is the sentence of a package doc comment that names the
	// work its bare places belong to.
	refDefault = regexp.MustCompile(`bare\s+section[^.;]*?refers\s+to\s+(?:the\s+)?(.+?)[.;]`)
	// refNotAuthor are capitalised words that precede a year without
	// naming an author ("March 2026", "Since 2015").
	refNotAuthor = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December", "The", "In", "Since",
		"Until", "Before", "After", "From", "By", "Of", "Copyright"}
)

// refText is a piece of text to check (one comment group, or a whole
// document) with the file line each of its lines starts on.
type refText struct {
	text  string
	lines []int
	pkg   bool // the doc comment of the package clause
}

// line is the file line of byte offset off of the text.
func (c refText) line(off int) int {
	return c.lines[strings.Count(c.text[:off], "\n")]
}

// refComments returns the comment groups of Go source src in order, the
// package doc comment marked. Directives (//go:...) are left out.
func refComments(path string, src []byte) []refText {
	fset := token.NewFileSet()
	file := fset.AddFile(path, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	var out []refText
	last := -2 // the last line of the previous // comment, if it ended there
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		line := file.Line(pos)
		if tok != token.COMMENT {
			if tok == token.PACKAGE && len(out) > 0 && last == line-1 {
				out[len(out)-1].pkg = true
			}
			if tok != token.SEMICOLON || lit != "\n" {
				last = -2
			}
			continue
		}
		if strings.HasPrefix(lit, "//go:") {
			continue
		}
		var text []string
		if rest, ok := strings.CutPrefix(lit, "//"); ok {
			text = []string{rest}
			if len(out) == 0 || last != line-1 {
				out = append(out, refText{})
			}
		} else {
			text = strings.Split(strings.TrimSuffix(strings.TrimPrefix(lit, "/*"), "*/"), "\n")
			out = append(out, refText{})
		}
		c := &out[len(out)-1]
		for k, t := range text {
			if len(c.lines) > 0 {
				c.text += "\n"
			}
			c.text += t
			c.lines = append(c.lines, line+k)
		}
		last = line + len(text) - 1
	}
}

// refKeys parses the keys of a references file: every "### key" heading
// and every backquoted form on an "Also cited as:" line.
func refKeys(md string) map[string]bool {
	keys := map[string]bool{}
	quoted := regexp.MustCompile("`([^`]+)`")
	for _, l := range strings.Split(md, "\n") {
		if k, ok := strings.CutPrefix(l, "### "); ok {
			keys[strings.TrimSpace(k)] = true
		}
		if rest, ok := strings.CutPrefix(l, "Also cited as:"); ok {
			for _, m := range quoted.FindAllStringSubmatch(rest, -1) {
				keys[m[1]] = true
			}
		}
	}
	return keys
}

// refWorks returns the byte offsets at which text names a work, in order,
// and reports to fail each form that names no key. Author-year citations
// are always looked for; the source documents and RFCs only when works is
// true (in a README, a seed and its number are usually a random seed).
func refWorks(c refText, keys map[string]bool, works bool, fail func(off int, msg string)) []int {
	var at []int
	covered := map[int]bool{}
	var years [][]int
	if refYear.MatchString(c.text) {
		years = refAuthorYear.FindAllStringSubmatchIndex(c.text, -1)
	}
	for _, m := range years {
		authors := strings.Join(strings.Fields(c.text[m[2]:m[3]]), " ")
		first, _, _ := strings.Cut(authors, " ")
		if slices.Contains(refNotAuthor, strings.TrimSuffix(first, ",")) {
			continue
		}
		key := authors + " " + c.text[m[4]:m[5]]
		if !keys[key] {
			fail(m[0], fmt.Sprintf("cites %q, which is not a key of docs/references.md", key))
		}
		for _, e := range refEtAl.FindAllStringIndex(c.text[m[0]:m[1]], -1) {
			covered[m[0]+e[0]] = true
		}
		at = append(at, m[0])
	}
	if strings.Contains(c.text, "al.") {
		for _, m := range refEtAl.FindAllStringIndex(c.text, -1) {
			if !covered[m[0]] {
				fail(m[0], fmt.Sprintf("cites %q without a year: use its key in docs/references.md", c.text[m[0]:m[1]]))
			}
		}
	}
	if works {
		for _, m := range refWork.FindAllStringIndex(c.text, -1) {
			key := strings.Join(strings.Fields(c.text[m[0]:m[1]]), " ")
			if key == "Dissertation" {
				key = "dissertation"
			}
			if !keys[key] {
				fail(m[0], fmt.Sprintf("cites %q, which is not a key of docs/references.md", key))
			}
			at = append(at, m[0])
		}
	}
	slices.Sort(at)
	return at
}

// refFile is a file to check: Go source, or a document (Markdown, YAML)
// whose author-year citations are checked.
type refFile struct {
	path string
	src  []byte
}

// refCheck returns a message for each citation in files that names no key
// of references, each place in a work that cannot be traced to a work, and
// each Go package whose comments cite a work while its doc comment does
// not point to docs/references.md.
func refCheck(files []refFile, references string) []string {
	keys := refKeys(references)
	var errs []string
	type pkgInfo struct {
		doc, docFile string // the package doc comment and its file
		cites        bool
		bare         []string // where its places with no work named are
	}
	pkgs := map[string]*pkgInfo{}
	var dirs []string
	for _, f := range files {
		if !strings.HasSuffix(f.path, ".go") {
			lines := []int{1}
			for _, b := range f.src {
				if b == '\n' {
					lines = append(lines, lines[len(lines)-1]+1)
				}
			}
			doc := refText{text: string(f.src), lines: lines}
			refWorks(doc, keys, false, func(off int, msg string) {
				errs = append(errs, fmt.Sprintf("%s:%d: %s", f.path, doc.line(off), msg))
			})
			continue
		}
		dir := filepath.Dir(f.path)
		p := pkgs[dir]
		if p == nil {
			p = &pkgInfo{}
			pkgs[dir] = p
			dirs = append(dirs, dir)
		}
		for _, c := range refComments(f.path, f.src) {
			at := refWorks(c, keys, true, func(off int, msg string) {
				errs = append(errs, fmt.Sprintf("%s:%d: %s", f.path, c.line(off), msg))
			})
			if len(at) > 0 {
				p.cites = true
			}
			if c.pkg && !strings.HasSuffix(f.path, "_test.go") {
				p.doc += c.text + "\n"
				p.docFile = f.path
			}
			for _, m := range refPlace.FindAllStringIndex(c.text, -1) {
				p.cites = true
				if len(at) == 0 || at[0] > m[0] {
					p.bare = append(p.bare, fmt.Sprintf("%s:%d: %q", f.path, c.line(m[0]), c.text[m[0]:m[1]]))
				}
			}
		}
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		p := pkgs[dir]
		if !p.cites {
			continue
		}
		if !strings.Contains(p.doc, "docs/references.md") {
			errs = append(errs, fmt.Sprintf("%s: its comments cite works, but no package doc comment says that they are listed in docs/references.md", dir))
			continue
		}
		if len(p.bare) == 0 {
			continue
		}
		def := ""
		if m := refDefault.FindStringSubmatch(p.doc); m != nil {
			def = strings.Join(strings.Fields(m[1]), " ")
		}
		if !keys[def] {
			for _, w := range p.bare {
				errs = append(errs, fmt.Sprintf("%s names no work before it in its comment, and the doc comment of %s names no default (\"a bare section, equation or algorithm number refers to KEY\")", w, dir))
			}
		}
	}
	return errs
}

// TestReferencesCited checks the repository: every work its Go comments,
// README files, docs and openapi.yaml cite has a key in docs/references.md,
// every place in a work cited by the comments can be traced to its work,
// and every package whose comments cite a work says in its doc comment
// that the works are listed in docs/references.md.
func TestReferencesCited(t *testing.T) {
	references, err := os.ReadFile("docs/references.md")
	if err != nil {
		t.Fatal(err)
	}
	var files []refFile
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if (ext != ".go" && ext != ".md" && path != "openapi.yaml") || path == filepath.Join("docs", "references.md") {
			return nil
		}
		src, err := os.ReadFile(path)
		files = append(files, refFile{path, src})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range refCheck(files, string(references)) {
		t.Error(e)
	}
}

// TestReferencesCheck_rejects shows refCheck failing on each kind of fault
// and passing the same citations written by the keys.
func TestReferencesCheck_rejects(t *testing.T) {
	const references = "### dissertation\n\n### Hu et al. 2008\n\n### seed 002\n\nAlso cited as: `McFee and Lanckriet 2010`.\n"
	const good = "// Package p is cited.\n//\n// Works cited in the comments are listed in docs/references.md; a bare\n// section, equation or algorithm number refers to the dissertation.\npackage p\n\n" +
		"// F follows Hu et al. (2008) and McFee and Lanckriet 2010 §4, with the\n// ranks of §4.7.3.\nfunc F() {}\n"
	if errs := refCheck([]refFile{{"p/p.go", []byte(good)}}, references); len(errs) != 0 {
		t.Fatalf("citations by their keys rejected: %q", errs)
	}
	for _, c := range []struct {
		name, src, want string
	}{
		{"unlisted work", "// Works cited in the comments are listed in docs/references.md.\npackage p\n\n// F is the method of Foo et al. 2031.\nfunc F() {}\n",
			`p/p.go:4: cites "Foo et al. 2031"`},
		{"authors not the key", "// Works cited in the comments are listed in docs/references.md.\npackage p\n\n// F is WRMF (Hu, Koren and\n// Volinsky 2008).\nfunc F() {}\n",
			`p/p.go:4: cites "Hu, Koren and Volinsky 2008"`},
		{"no year", "// Works cited in the comments are listed in docs/references.md.\npackage p\n\n// F solves the normal equations of Hu et al.\nfunc F() {}\n",
			`p/p.go:4: cites "Hu et al." without a year`},
		{"unlisted seed", "// Works cited in the comments are listed in docs/references.md.\npackage p\n\n// F is seed 009 §2.\nfunc F() {}\n",
			`p/p.go:4: cites "seed 009"`},
		{"no doc line", "// Package p has no pointer.\npackage p\n\n// F is dissertation §4.3.\nfunc F() {}\n",
			`p: its comments cite works, but no package doc comment`},
		{"bare place, no default", "// Works cited in the comments are listed in docs/references.md.\npackage p\n\n// F is the search of §4.7.3.\nfunc F() {}\n",
			`p/p.go:4: "§4.7.3" names no work before it`},
		{"work named after the place", "// Works cited in the comments are listed in docs/references.md.\npackage p\n\n// F is Eq. (4.8) of the dissertation.\nfunc F() {}\n",
			`p/p.go:4: "Eq. (4.8" names no work before it`},
		{"document", "", `README.md:4: cites "Foo et al. 2031"`},
	} {
		files := []refFile{{"p/p.go", []byte(c.src)}}
		if c.name == "document" {
			files = []refFile{{"README.md", []byte("# r\n\nas Hu et al. 2008 and\nFoo et al. (2031) show\n")}}
		}
		errs := refCheck(files, references)
		if len(errs) != 1 || !strings.HasPrefix(errs[0], c.want) {
			t.Errorf("%s: errors %q, want one starting %q", c.name, errs, c.want)
		}
	}
}
