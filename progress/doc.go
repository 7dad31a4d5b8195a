// Package progress renders the engine's resource events the way docker
// compose does: a live tty view, plain lines, or JSON lines
// (--progress tty|plain|json). The engine only emits Events; nothing here
// knows about backends.
package progress
