package mem

import "unsafe"

// Prefetch asks the processor to bring the n bytes from p into its caches
// (PREFETCHT0 per 64-byte line, at least one), without waiting for them:
// unlike a load, a prefetch that misses does not hold back the
// instructions after it. An address that is not mapped is ignored.
//
//go:noescape
func Prefetch(p unsafe.Pointer, n uintptr)
