// Package kernel9p mounts a 9P2000.L export (package export, over any
// connection) with the kernel's own 9p file system, trans=fd: the kernel
// speaks 9P on one end of a socket pair, this process copies the other
// end to and from the connection. It is the server side of a client-local
// mount where the kernel has 9p; package fuse serves where it has not.
// Available says which (from /proc/filesystems: detected, never assumed).
//
// Of cornus's packages it imports only mountinfo (its tests use export).
package kernel9p
