package serving

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// backgroundThread runs the calling goroutine at a lower priority, for
// work that should leave the cores to the requests, and returns the
// function that ends that. A goroutine holds one of Go's GOMAXPROCS
// processors while it runs, whatever its thread's priority, so the
// requests would be left one processor of two: GOMAXPROCS is raised by
// one for each such goroutine running, and the goroutine's thread runs at
// nice 10, so the kernel gives the cores to the requests' threads first.
// The goroutine is locked to that thread, which ends with it.
func backgroundThread() (end func()) {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 10)
	extraProcs.Lock()
	defer extraProcs.Unlock()
	if extraProcs.n == 0 {
		extraProcs.prev = runtime.GOMAXPROCS(0)
	}
	extraProcs.n++
	runtime.GOMAXPROCS(extraProcs.prev + extraProcs.n)
	return func() {
		extraProcs.Lock()
		defer extraProcs.Unlock()
		if extraProcs.n--; extraProcs.n > 0 {
			runtime.GOMAXPROCS(extraProcs.prev + extraProcs.n)
			return
		}
		// The default, unless GOMAXPROCS was set (by the environment
		// or the program): then the value it was.
		if runtime.SetDefaultGOMAXPROCS(); runtime.GOMAXPROCS(0) != extraProcs.prev {
			runtime.GOMAXPROCS(extraProcs.prev)
		}
	}
}

// extraProcs counts the background goroutines running: GOMAXPROCS is prev
// plus n while n > 0, and the last to end puts it back.
var extraProcs struct {
	sync.Mutex
	n, prev int
}
