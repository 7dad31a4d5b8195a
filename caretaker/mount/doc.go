// Package mount mounts a client's 9P export (package export) on this
// host the best way the kernel allows: its own 9p file system where it has
// one (package kernel9p, trans=fd), else FUSE over a 9P client (package
// fuse). Mount chooses; Mounted and Sweep see both kinds. The server
// (host backends) and the caretaker's mount role (remote modes, sidecars)
// mount through it.
package mount
