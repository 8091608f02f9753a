//go:build !amd64

package mem

import "unsafe"

// Prefetch is a no-op where there is no assembly for it (prefetch_amd64.s).
func Prefetch(p unsafe.Pointer, n uintptr) {}
