//go:build !linux

package storage

// Prefetch does nothing where posix_fadvise is not available.
func (s *Store) Prefetch() {}

// readMapped copies v out of the map.
func readMapped(v []byte) []byte { return append([]byte(nil), v...) }
