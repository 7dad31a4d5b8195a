//go:build !linux

package sandbox

// limitMemory is a no-op here: only Linux's RLIMIT_AS is used. The
// child still keeps a runaway's crash out of the server's process.
func limitMemory(uint64) error { return nil }
