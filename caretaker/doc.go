// Package caretaker is the per-replica companion of a deployment: `cornus
// caretaker` (this binary, in the agent image) reads one role config from
// its environment and runs every role it names, on one connection back to
// the server. The companion owns the replica's network namespace (the app
// joins it), so what it sets up there, such as transparent egress, is in
// place before the app's first instruction. Roles live in subpackages
// (outbound: egress; mount: client-local mounts).
package caretaker
