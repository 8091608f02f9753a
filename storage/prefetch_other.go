//go:build !linux

package storage

// Prefetch does nothing where posix_fadvise is not available.
func (s *Store) Prefetch() {}
