package monitor

import (
	"net"
	"path/filepath"
	"time"
)

// Alive reports whether the monitor named in r still runs: its pid exists,
// is not a zombie, and started when the record says (so a recycled pid is
// not mistaken for it). A final record has no monitor. A namespaced
// monitor is checked through its socket as the record names it (the path
// in the monitor's own mount namespace): use AliveIn from elsewhere.
func Alive(r Record) bool { return AliveIn(filepath.Dir(r.Monitor.Socket), r) }

// AliveIn is Alive for the record read from the record directory dir, as
// this process sees it: a namespaced monitor is alive while its control
// socket in dir accepts a connection.
func AliveIn(dir string, r Record) bool {
	m := r.Monitor
	if m.Pid <= 0 {
		return false
	}
	if m.Namespaced {
		return socketAnswers(filepath.Join(dir, socketName))
	}
	ticks, running, err := processStart(m.Pid)
	return err == nil && running && ticks == m.StartTicks
}

// socketAnswers reports whether a control socket accepts a connection.
func socketAnswers(path string) bool {
	addr, release, err := socketAddr(path)
	if err != nil {
		return false
	}
	defer release()
	c, err := net.DialTimeout("unix", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
