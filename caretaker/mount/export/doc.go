// Package export serves a directory of this machine over 9P2000.L
// (hugelgupf/p9): the client side of a client-local mount. Serve exports a
// directory, ServeFile a single file (its parent, with only that name
// visible). The export is confined to its root: every name is one path
// component resolved below a directory descriptor, symlinks are stored and
// never followed, hard links and renames stay inside, device nodes are
// never created or opened; ReadOnly refuses every mutation here, whatever
// the mounting side does. FuzzNames fuzzes the name handling.
//
// It is Linux-only (O_PATH descriptors, /proc/self/fd) and imports no
// other cornus package.
package export
