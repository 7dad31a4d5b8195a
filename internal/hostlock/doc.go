// Package hostlock is cornus's named locks across the processes of one
// user on this host: a flock on a file in a lock directory (DefaultDir),
// a file that lives only while it is held. Lock waits for one; the engine
// locks projects with it, the dockerhost backend a daemon's network
// creations.
//
// It imports nothing of cornus's.
package hostlock
