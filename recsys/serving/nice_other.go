//go:build !linux

package serving

// backgroundThread does nothing here: thread priorities are Linux's.
func backgroundThread() (end func()) { return func() {} }
