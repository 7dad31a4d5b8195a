// Package fuse mounts a 9P2000.L export (package export, over any
// connection) as a FUSE file system (hanwen/go-fuse, in this process): the
// server side of a client-local mount where the kernel has no 9p file
// system. Mount mounts, FS.Unmount unmounts — lazily and aborting the FUSE
// connection when the mount is busy or the export is gone, so nothing
// stays mounted and no goroutine stays blocked. Sweep detaches what a
// killed process left behind; Mounted lists cornus mounts below a
// directory.
//
// Of cornus's packages it imports only mountinfo (its tests use export).
package fuse
