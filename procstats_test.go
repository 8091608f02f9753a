package main

import (
	"math"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestProcMemory reads this process's memory: resident now, at its peak,
// and split into anonymous and file-backed pages, which with shared memory
// make up the resident set.
func TestProcMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	buf := make([]byte, 64<<20)
	for k := range buf {
		buf[k] = byte(k)
	}
	m := procMemory(os.Getpid())
	if m.RSS < int64(len(buf)) || m.Peak < m.RSS || m.Anon < int64(len(buf)) || m.Anon+m.File > m.RSS {
		t.Errorf("memory %+v after touching %d bytes: want RSS and anonymous memory ≥ that, peak ≥ RSS ≥ anonymous + file", m, len(buf))
	}
	if got := peakRSS(); got < m.Peak {
		t.Errorf("peakRSS %d below the peak read before it, %d", got, m.Peak)
	}
	runtime.KeepAlive(buf)
	if got := procMemory(math.MaxInt32); got != (processMemory{}) {
		t.Errorf("memory of a process that does not exist: %+v, want zero", got)
	}
}

// TestProcCPU compares the CPU time /proc reports for this process with
// getrusage's, after some work: they differ by the kernel's clock ticks.
func TestProcCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	x := 0.0
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		for k := range 10000 {
			x += math.Sqrt(float64(k))
		}
	}
	got, want := procCPU(os.Getpid()), cpuSeconds()
	if got <= 0 || math.Abs(got-want) > 0.1 {
		t.Errorf("procCPU %.3f s, getrusage %.3f s (work %g)", got, want, x)
	}
	if got := procCPU(math.MaxInt32); got != 0 {
		t.Errorf("CPU time of a process that does not exist: %v, want 0", got)
	}
}
