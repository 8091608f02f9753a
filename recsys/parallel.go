package recsys

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// ProgressFunc reports that done of total units of a stage are finished.
// Calls are serialised; it may be called from any goroutine.
type ProgressFunc func(stage string, done, total int)

// ParallelFor runs the rows [0, n) in chunks on runtime.GOMAXPROCS(0)
// goroutines. newWorker is called once per goroutine to build its scratch
// space and returns the function that processes rows [lo, hi). It stops
// taking new chunks once ctx is done and returns ctx.Err() then.
func ParallelFor(ctx context.Context, n, chunk int, stage string, progress ProgressFunc, newWorker func() func(lo, hi int)) error {
	if n == 0 {
		return ctx.Err()
	}
	if chunk < 1 {
		chunk = 1
	}
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	var (
		next int64
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := newWorker()
			for ctx.Err() == nil {
				lo := int(atomic.AddInt64(&next, int64(chunk))) - chunk
				if lo >= n {
					return
				}
				hi := min(lo+chunk, n)
				run(lo, hi)
				if progress != nil {
					mu.Lock()
					done += hi - lo
					progress(stage, done, n)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
