//go:build !amd64

package mf

import "unsafe"

// prefetch is a no-op where there is no assembly for it (prefetch_amd64.s).
func prefetch(p unsafe.Pointer, n uintptr) {}
