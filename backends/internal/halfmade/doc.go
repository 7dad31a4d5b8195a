// Package halfmade cleans up after a Create that died half-way (cornus
// killed mid-up) on a daemonless backend that keeps each container in a
// directory of its own: a directory without its record file, and network
// attachments of containers that no longer exist. A Create holds its
// container's creating lock (Lock) from before it makes the directory
// until it has written the record; Sweep removes only what no Create
// holds.
//
// Entry points: Store.Lock, Store.DropStaleLock, Store.Sweep. The backend
// supplies the removal of its own parts (runtime container, root, volumes).
// It imports backends and backends/internal/{cni,localstore}.
package halfmade
