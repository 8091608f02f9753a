// Package web holds the dashboard, embedded in the binary and served at /.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// FS is the dashboard's file tree, rooted at index.html.
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}
