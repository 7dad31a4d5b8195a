// Package export serves a directory of this machine over 9P2000.L
// (hugelgupf/p9): the client side of a client-local mount. Serve exports a
// directory, ServeFile a single file (its parent, with only that name
// visible). The export is confined to its root: every name is one path
// component resolved below a directory descriptor, symlinks are stored and
// never followed, hard links and renames stay inside, device nodes are
// never created or opened; ReadOnly refuses every mutation here, whatever
// the mounting side does.
//
// Two confinements, one behaviour: on Linux nodes are O_PATH descriptors
// resolved with openat2(2) (node.go, mutate.go, readdir.go); everywhere
// else (macOS, Windows, Linux before 5.6, or Options.Portable) directory
// nodes hold an os.Root and every name is Lstat'ed before it is used
// (portable*.go, pstat_*.go). Both run the same tests and FuzzNames on
// Linux. It imports no other cornus package.
package export
