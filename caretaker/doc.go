// Package caretaker is the per-replica companion of a deployment: `cornus
// caretaker` (this binary, in the agent image) reads one role config from
// its environment and runs every role it names, on one connection back to
// the server. The companion owns the replica's network namespace (the app
// joins it), so what it sets up there, such as transparent egress, is in
// place before the app's first instruction. Roles: egress (outbound/),
// and in the server's remote mode mount (mountrole.go: client-local
// mounts, package mount over the relay, in the volume shared with the app,
// shared.go; a single file pinned, package mount/pin), portforward (forward.go: the server's dial streams dialed
// on this namespace) and agent (agent.go: exec --forward-agent's
// socket). Companions (companion.go) is the engine's hook that decides
// who gets one and with what: no capability but NET_ADMIN for transparent
// egress and SYS_ADMIN (with /dev/fuse) for client-local mounts, a
// read-only root, no-new-privileges; and the transparent-mode app without
// CAP_NET_RAW and CAP_NET_ADMIN, which would take it past the redirect
// (refused when it asks for them). It is ready when it listens on
// ReadySocket. It must not import server (the server imports it);
// server/client and server/api are its wire.
package caretaker
