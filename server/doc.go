// Package server is `cornus serve`: the deploy API over HTTP/1.1 and
// WebSocket, authenticated by bearer tokens, in front of one backend.
// Clients send specs they loaded themselves (Compose files stay on the
// laptop); the server runs the engine. Deploy-attach sessions (a
// WebSocket multiplexed with yamux) tie a deployment's life to its
// client's and carry port-forward and tunnel streams back to workloads.
package server
