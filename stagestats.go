package main

import (
	"syscall"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// stageMemory records the peak RSS and the CPU time of each stage of a job.
type stageMemory struct {
	stage   string
	peaks   map[string]int64
	overall int64
	cpu     map[string]float64
	cpuMark float64
}

func newStageMemory() *stageMemory {
	return &stageMemory{peaks: map[string]int64{}, cpu: map[string]float64{}, cpuMark: cpuSeconds()}
}

// cpuSeconds is the process's user and system CPU time so far: on a
// shared machine it says what a stage cost when its wall time says how
// busy the machine was.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// next closes the current stage with its peak and starts the named one. The
// peaks are per stage only where the kernel lets the count be reset;
// otherwise each is the peak so far.
func (m *stageMemory) next(stage string) {
	p := peakRSS()
	m.overall = max(m.overall, p)
	c := cpuSeconds()
	if m.stage != "" {
		m.peaks[m.stage] = max(m.peaks[m.stage], p)
		m.cpu[m.stage] += c - m.cpuMark
	}
	m.cpuMark = c
	m.stage = stage
	if stage != "" {
		resetPeakRSS()
	}
}

// trainStats is what `recsys train --stats FILE` writes and `recsys scale`
// reads back: the time and peak RSS of a training job and of each stage,
// and the models it stored.
type trainStats struct {
	Seconds    float64      `json:"seconds"`
	CPUSeconds float64      `json:"cpu_seconds"`
	PeakRSS    int64        `json:"peak_rss_bytes"`
	Stages     []stageStats `json:"stages"`
	// Models are the records of the versions the job stored: parameters,
	// validation measures, training time and serving cost.
	Models []api.ModelInfo `json:"models,omitempty"`
	// Skipped are the models the job did not fit, with the reason
	// (api.Job.Skipped).
	Skipped []api.SkippedModel `json:"skipped,omitempty"`
}

type stageStats struct {
	Name       string  `json:"name"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	PeakRSS    int64   `json:"peak_rss_bytes"`
}
