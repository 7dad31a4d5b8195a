package monitor

import (
	"fmt"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
)

// stopDefaults fills a stop's signal and grace from the record.
func (m *monitor) stopDefaults(sig syscall.Signal, grace *time.Duration) (syscall.Signal, time.Duration) {
	s := m.rec.Supervision
	if sig == 0 {
		sig = s.StopSignal
	}
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	g := DefaultStopGrace
	switch {
	case grace != nil:
		g = *grace
	case s.StopGrace != nil:
		g = *s.StopGrace
	}
	return sig, max(g, 0)
}

// requestStop marks the container stopped (or the monitor quitting) and
// signals the running process, with SIGKILL once grace has passed.
func (m *monitor) requestStop(sig syscall.Signal, grace *time.Duration, quit bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if quit {
		m.quitting = true
	} else if m.rec.Desired != DesiredStopped {
		m.rec.Desired = DesiredStopped
		m.persistLocked()
	}
	m.stopSig, m.stopGrace = m.stopDefaults(sig, grace)
	if m.proc != nil {
		m.signalLocked(m.stopSig, m.stopGrace)
	}
	m.nudge()
}

func (m *monitor) signalLocked(sig syscall.Signal, grace time.Duration) {
	gen := m.gen
	_ = m.proc.Signal(sig) // fails only when it is exiting already
	time.AfterFunc(grace, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.gen == gen && m.proc != nil {
			_ = m.proc.Signal(syscall.SIGKILL)
		}
	})
}

func (m *monitor) nudge() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// kill forwards a signal. As with docker kill, SIGKILL or the stop signal
// also means "stay stopped": the restart policy does not undo it.
func (m *monitor) kill(sig syscall.Signal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sig <= 0 || sig > 64 {
		return fmt.Errorf("%w: kill: %d is not a Linux signal", errdefs.ErrInvalidArgument, int(sig))
	}
	stopSig, _ := m.stopDefaults(0, nil)
	ends := sig == syscall.SIGKILL || sig == stopSig
	if ends && m.rec.Desired != DesiredStopped {
		m.rec.Desired = DesiredStopped
		m.persistLocked()
		m.nudge()
	}
	if m.proc == nil {
		if ends {
			return nil // restarting: the stop just recorded ends it
		}
		return fmt.Errorf("%w: container %s is not running", errdefs.ErrConflict, m.rec.ID)
	}
	if err := m.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal container %s: %w", m.rec.ID, err)
	}
	return nil
}
