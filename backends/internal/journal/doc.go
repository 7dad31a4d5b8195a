// Package journal is the event log of a daemonless backend: lifecycle
// events appended as JSON lines by whichever process made them happen
// (the CLI creating or removing a container, the proxy, a container's
// monitor seeing it start, die or turn healthy), read back with history
// (docker events --since/--until) and followed live. It rotates at a
// fixed size keeping one older generation, so it stays bounded.
package journal
