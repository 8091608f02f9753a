package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// startCPUProfile writes a CPU profile to path until stop is called (of
// train and eval's --cpuprofile); an empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// peakHeapProfile writes a heap profile to path each time the live heap
// passes its highest mark so far by an eighth, checked every half second,
// so the file left at the end shows what held the memory at the peak (go
// tool pprof -sample_index=inuse_space). stop ends the checks and
// returns the last write's error.
func peakHeapProfile(path string) (stop func() error) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, finished := make(chan struct{}), make(chan error, 1)
	go func() {
		var peak uint64
		var err error
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > peak+peak/8 {
				peak = live
				runtime.GC() // the heap profile reports the last GC's live objects
				err = writeHeapProfile(path)
			}
			select {
			case <-done:
				finished <- err
				return
			case <-t.C:
			}
		}
	}()
	return func() error { close(done); return <-finished }
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
