// Package egress is the client-side egress policy: where a workload's
// outbound connection goes (client, gateway, cluster or deny), decided by
// first-match rules over host globs, CIDRs and ports, or by a PAC script
// run in a sandboxed JavaScript runtime. It is pure — no I/O, no clock
// or randomness it was not given — so the caretaker, the server and the
// client, each evaluating the same policy, reach the same decision.
//
// A PAC run is bounded the same way at every hop, and past a bound it
// decides deny: the CPU time of its thread (PACOptions.Deadline, so that
// a loaded machine denies no plain script), WallBound of real time, the
// heap it grows, regexp2's match timeout (goja's interrupt never reaches
// a backtracking match), and caps on the builtins that would allocate
// without limit in one native step (no binary types at all). The caps
// cannot cover every native loop: the server, which runs tenants'
// scripts, runs them out of process through a Runner (egress/sandbox).
//
// Local names the addresses a route dialed from a machine cornus runs on
// refuses (egress/netguard dials them); Decision.Explicit says the rule
// named its destination, which lets the client dial its own loopback.
package egress
