// Package prepare makes on this host what a daemonless backend's Create
// needs before the runtime sees the container: its mounts (binds,
// named and anonymous volumes, tmpfs), secret and config files, its
// network namespace attached to its networks with hosts, resolv.conf and
// published ports, the copy-up of image content into empty volumes, and
// the container's first monitor record.
//
// Entry points: Host (the backend's name, volumes and networks) with
// Host.Mounts and Host.Network, Files, SeedCandidates, CopyTree and
// Record. What it made is undone through the caller's undo list; where
// the image's content is read from for seeding stays with the backend.
//
// It imports backends, spec and
// backends/internal/{cni,localstore,monitor,ocispec}; never a backend.
package prepare
