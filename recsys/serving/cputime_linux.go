package serving

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling thread has used, with nanosecond
// resolution (CLOCK_THREAD_CPUTIME_ID; getrusage's thread figure counts in
// microseconds, too coarse for a popularity answer of a few). The caller
// locks its goroutine to the thread for the span it measures.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return time.Duration(time.Now().UnixNano()) // no thread clock: wall time on the locked thread
	}
	return time.Duration(ts.Nano())
}
