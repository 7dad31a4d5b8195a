// Package netguard keeps a workload's egress off the network of the
// machine that dials it: the server's gateway route, the client's route
// on the developer's machine. A destination's name is resolved first and
// every address checked (egress.Local: loopback, link-local with the
// cloud metadata service, unspecified, multicast, broadcast; and the
// machine's own addresses), then the dial goes to the addresses checked,
// never to the name again: a name that resolves elsewhere the second time
// (DNS rebinding) changes nothing.
//
// It imports egress; the server and the client import it.
package netguard
