// Package egress is the client-side egress policy: where a workload's
// outbound connection goes (client, gateway, cluster or deny), decided by
// first-match rules over host globs, CIDRs and ports, or by a PAC script
// run in a sandboxed JavaScript runtime. It is pure — no I/O, no clock
// or randomness it was not given — so the caretaker, the server and the
// client, each evaluating the same policy, reach the same decision.
package egress
