// Package tarfs moves trees of a local file system in and out of tar
// streams: Extract writes a stream into a directory through an os.Root
// of it (no entry, and no link an earlier entry planted, reaches outside
// it; devices and FIFOs are refused; a stream past its limit is an
// error), and Write archives a local path under a root name of the
// caller's choosing (docker cp's archive of a local path).
package tarfs
