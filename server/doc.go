// Package server is `cornus serve`: the deploy API over HTTP/1.1 and
// WebSocket, authenticated by bearer tokens, in front of one backend.
// Clients send specs they loaded themselves (Compose files stay on the
// laptop); the server runs the engine. Deploy-attach sessions (a
// WebSocket multiplexed with yamux) tie a deployment's life to its
// client's and carry port-forward and tunnel streams back to workloads,
// and the server's streams to the client: client-local mounts (mounts.go:
// each export mounted with caretaker/mount — the kernel's 9p where it has
// one, else FUSE — under <DataDir>/mounts/<session>/<n> and bound into the
// apps, a single file pinned by caretaker/mount/pin; on the session's end
// the containers go first, then the mounts) and egress. In remote mode
// (remote.go) the server mounts nothing: companions dial back on the relay
// (relay.go), and the server forwards their mount streams to the client,
// opens port-forward streams on them, and carries exec --forward-agent's
// connections (agent.go).
package server
