package main

import (
	"os"
	"runtime/debug"
	"strings"

	"github.com/prometheus/procfs"
)

// What the kernel reports of a process, read from /proc: its memory
// (procMemory), its CPU time (procCPU), and the machine's load (loadAvg).
// Each reads 0 or "" where /proc is missing (not Linux) or the process is
// gone. The CPU time of this process comes from getrusage instead
// (cpuSeconds).

// processMemory is a process's resident memory in bytes, from
// /proc/PID/status.
type processMemory struct {
	RSS  int64 // VmRSS: resident now
	Peak int64 // VmHWM: the peak resident set since the start or the last resetPeakRSS
	Anon int64 // RssAnon: resident anonymous memory (heap, stacks)
	File int64 // RssFile: resident file-backed memory (mapped files)
}

// procMemory reads the memory of process pid; zero where unknown.
func procMemory(pid int) processMemory {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return processMemory{}
	}
	s, err := p.NewStatus()
	if err != nil {
		return processMemory{}
	}
	return processMemory{RSS: int64(s.VmRSS), Peak: int64(s.VmHWM), Anon: int64(s.RssAnon), File: int64(s.RssFile)}
}

// peakRSS is this process's peak resident set size (VmHWM) in bytes.
func peakRSS() int64 { return procMemory(os.Getpid()).Peak }

// resetPeakRSS returns freed memory to the system and restarts the VmHWM
// count from the current RSS (Linux: writing 5 to clear_refs), so that the
// next reading is the peak of what runs in between.
func resetPeakRSS() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// procCPU is the user and system CPU seconds process pid has used so far
// (/proc/PID/stat, in clock ticks of 1/100 s).
func procCPU(pid int) float64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	s, err := p.Stat()
	if err != nil {
		return 0
	}
	return s.CPUTime()
}

// loadAvg is the 1, 5 and 15 minute load average as the kernel writes it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
