// Package pin binds one regular file of a client-local mount onto a file
// of this host's own, so that what a runtime later binds into a container
// is that inode and never a path the client controls. The client serves
// the file and may make it a symlink at any time; a runtime binding
// <mount>/<file> resolves it on its host and follows the link (a
// root-only file of the host bound into the container). File opens the
// file without following a link (O_PATH|O_NOFOLLOW), requires a regular
// file, and binds that very inode (/proc/self/fd) onto a private empty
// file: the bind keeps its type whatever the client does afterwards
// (FUSE marks an inode that changes type bad), at every restart of the
// container. Remove undoes it.
//
// The server's host-mode mounts (server/mounts.go) and the caretaker's
// mount role (remote modes, caretaker/mountrole.go) pin through it. It
// imports nothing of cornus's.
package pin
