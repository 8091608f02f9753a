package storage

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readMapped copies v, a value in a read transaction, out of the map with
// the kernel's readahead. bbolt maps the file MADV_RANDOM, so copying a
// value whose pages are not in memory faults them in one 4 KiB page at a
// time (no readahead), and a thread in a page fault keeps its processor:
// a server starting on a cold file of 22 models (1.7 GB of blobs) took
// 424,000 major faults and 25 s to be ready, 6 s warm (docs/performance.md "Start").
// Marking the value's pages MADV_SEQUENTIAL for the copy, and MADV_RANDOM
// again after it, reads them ahead in large requests.
func readMapped(v []byte) []byte {
	if len(v) < 1<<20 {
		return append([]byte(nil), v...)
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	aligned := start &^ (page - 1)
	n := start - aligned + uintptr(len(v))
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, aligned, n, unix.MADV_SEQUENTIAL)
	out := append([]byte(nil), v...)
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, aligned, n, unix.MADV_RANDOM)
	return out
}

// physicalMemory is the memory the process may use, in bytes: the
// machine's, or the cgroup (v2) limit when lower; 0 if unknown.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	mem := int64(si.Totalram) * int64(si.Unit)
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && limit > 0 { // "max": none
			mem = min(mem, limit)
		}
	}
	return mem
}
