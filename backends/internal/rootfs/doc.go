// Package rootfs reads and writes files inside a container's root
// filesystem from the host (docker cp) without ever leaving it: every
// path is resolved by the kernel relative to a directory descriptor of
// the root (openat2 RESOLVE_IN_ROOT), and files are created, read and
// walked through descriptors, never by re-resolving a path string, so
// symlinks or renames a container plants cannot redirect a copy to host
// files. Linux only.
package rootfs
