// Package clientdeploy is the client's side of a deployment, the one
// workflow behind `cornus compose up` and `cornus deploy`: Open a Session
// (the local engine, with the host policy allowing bind mounts under the
// project directory and the caretaker companions, or a cornus server's
// deploy API with the token of $CORNUS_TOKEN or the login file), then
// Session.Deploy applies the egress policy, refuses what nothing would
// serve, prepares the client-local mounts (localmount.go), prints the
// backend's warnings, holds the server session (this process, or a
// detached session agent: agent.go, whose far end is ServeAgent) and runs
// Up. The commands' differences are Options; what they print around it,
// their flags, and the foreground's attach and Ctrl-C stay in cmd/cornus.
//
// The other compose verbs use a Session's Engine, Images and NoteEmpty;
// exec --forward-agent uses ForwardAgent; login, project adopt,
// port-forward and tunnel use ServerURL, NewClient, NewClientToken,
// LoginFile and SaveLogin. The session holder answers the server's
// streams with server/client: client-local mounts and egress (egress.go,
// the client routes' last hop).
//
// It imports the engine, backends/fromenv, hostpolicy, caretaker, egress
// and server/client; it must not import cobra or cmd/cornus: a command
// passes its output streams and environment as Streams.
package clientdeploy
