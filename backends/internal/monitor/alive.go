package monitor

// Alive reports whether the monitor named in r still runs: its pid exists,
// is not a zombie, and started when the record says (so a recycled pid is
// not mistaken for it). A final record has no monitor.
func Alive(r Record) bool {
	m := r.Monitor
	if m.Pid <= 0 {
		return false
	}
	ticks, running, err := processStart(m.Pid)
	return err == nil && running && ticks == m.StartTicks
}
