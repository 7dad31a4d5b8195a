// Package builder builds the images of services with a build section
// (Compose build:, a devcontainer's Dockerfile) with BuildKit and its
// Dockerfile frontend, where the backend's images live: the runtime's own
// builder where it has one (dockerd's BuildKit, podman's buildah, a
// buildkitd containerd worker on the backend's containerd), else a
// buildkitd of cornus's own whose results are loaded into the backend.
//
// The context and the Dockerfile are read on the client, confined to their
// directories (os.Root: no symlink or ".." leaves them) with the ignore
// file applied before anything is sent; secrets and the ssh agent are
// served from the client's side of the BuildKit session, never stored.
// Host power (privileged builds, the host's network, entitlements) is
// checked against hostpolicy before any build starts.
//
// Entry points: [New], [Builder.Build]. It imports spec, backends and
// hostpolicy; never the CLI, the engine or a backend package.
package builder
