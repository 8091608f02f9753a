// Package web holds the pages embedded in the binary: the dashboard, served
// at /, and the API reference, served at /docs.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// apidocs is the API reference page and the Swagger UI files it loads
// (apidocs/README.md says where they come from). The README itself is left
// out: it is no part of the page.
//
//go:embed apidocs/index.html apidocs/init.js apidocs/swagger-ui
var apidocs embed.FS

// FS is the dashboard's file tree, rooted at index.html.
func FS() fs.FS { return sub(static, "static") }

// APIDocs is the API reference's file tree, rooted at index.html.
func APIDocs() fs.FS { return sub(apidocs, "apidocs") }

func sub(fsys embed.FS, dir string) fs.FS {
	s, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return s
}
