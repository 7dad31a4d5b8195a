// Package client speaks cornus serve's deploy API: the project verbs the
// CLI uses (the same ones the engine offers locally), images, exec over
// WebSocket, and deploy-attach sessions whose streams reach workloads and
// whose server-opened streams it serves: client-local mounts (localmount.go:
// a directory or file of this machine exported over 9P by
// caretaker/mount/export, confined to it, read-only enforced here) and
// egress.
package client
