// Package muxconn is the byte stream a session's or a relay's multiplexer
// (yamux) runs over, and the HTTP upgrade that opens it.
//
// The client asks with a WebSocket handshake, so that every proxy that
// passes WebSockets passes it, and says it can do without WebSocket
// frames (HeaderStream: raw). A cornus server agrees in its 101 answer,
// and the upgraded connection then carries yamux's bytes as they are: no
// frame headers, no unmasking, and no client-side masking, which
// coder/websocket does in 4 KiB pieces, a write each, and which cost a
// relayed bulk stream most of its throughput. A server that does not
// agree speaks WebSocket, and so does the client then (it dials again as
// a plain WebSocket client).
//
// Either way the connection batches writes: yamux writes each frame's
// 12-byte header and its body separately, and one write (or message)
// each would double them.
package muxconn
