package main

import (
	"os"
	"runtime/debug"
	"strconv"
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

// machineMemory is the memory this process may use, in bytes: the
// machine's MemTotal (/proc/meminfo), or the limit of its cgroup (v2
// memory.max) when that is lower; 0 where neither is known.
func machineMemory() int64 {
	total := memTotal(readFileOr("/proc/meminfo"))
	if limit := cgroupLimit(readFileOr("/sys/fs/cgroup/memory.max")); limit > 0 && (total == 0 || limit < total) {
		return limit
	}
	return total
}

func readFileOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// memTotal reads MemTotal, in bytes, from the text of /proc/meminfo
// ("MemTotal:       24590788 kB"); 0 when it is not there.
func memTotal(meminfo string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// cgroupLimit reads a cgroup v2 memory.max: bytes, or "max" for none (0).
func cgroupLimit(s string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}
