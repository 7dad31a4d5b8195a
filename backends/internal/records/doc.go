// Package records keeps a daemonless backend's containers as cornus
// recorded them: each container's container.json (what cornus decided at
// create, which the runtime does not keep) read together with its monitor
// record. From these it answers List, Inspect and name or ID-prefix
// lookups, attaches to a container through its monitor, and streams the
// container events of the backend's journal.
//
// Entry points: Container (container.json), Store (the backend supplies
// where containers live, which IDs exist and whether a container's task
// runs), Store.Attach and Events. The runtime stays with the backend.
//
// It imports backends, spec and backends/internal/{journal,localstore,
// monitor}; never a backend.
package records
