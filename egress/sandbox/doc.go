// Package sandbox runs tenants' PAC scripts for the server in a child
// process, where a script that crashes its runtime (goja's natives
// allocate and loop past any interrupt: a fatal out-of-memory, a parser
// stack overflow) or hangs in native code takes down only the child.
//
// The child is the server's own binary re-executed with the hidden
// subcommand Subcommand (cmd/cornus; a test binary's TestMain calls Main
// when IsChild). It bounds its address space (RLIMIT_AS), compiles and
// decides over JSON lines on stdin and stdout, and exits when stdin
// closes. The parent, Sandbox, is an egress.Runner: it starts the child on
// first use, kills it when a decision has no answer a second past
// egress.WallBound (every run in it ends by then, unless stuck in native
// code), restarts it when it dies (backing off when it dies young), and
// decides deny while none runs: fail closed. A decision caught in a crash
// it did not cause is retried once on the next child. Clean answers are
// remembered for the minute they were given in, so a destination asked
// again makes no round trip.
//
// It imports egress and nothing of the server.
package sandbox
