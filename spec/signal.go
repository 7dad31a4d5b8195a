package spec

import (
	"encoding"
	"fmt"
)

// Signal is a Linux signal number; 0 means "the default" (the image's or
// the runtime's). It reads and writes as its canonical name (SIGTERM), so a
// record holding one reads the same as a record holding the name.
type Signal int

var (
	_ encoding.TextMarshaler   = Signal(0)
	_ encoding.TextUnmarshaler = (*Signal)(nil)
)

// String is the canonical name (SIGTERM, SIGRTMIN+3), "" for 0.
func (s Signal) String() string {
	if s == 0 {
		return ""
	}
	return SignalName(int(s))
}

// MarshalText writes the canonical name.
func (s Signal) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what ParseSignal accepts; "" is 0.
func (s *Signal) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = 0
		return nil
	}
	n, ok := ParseSignal(string(b))
	if !ok {
		return fmt.Errorf("%q is not a signal", b)
	}
	*s = Signal(n)
	return nil
}

// SignalOr is the signal name names (as ParseSignal reads it), or def when
// it names none: a stop signal read back from a daemon or an image.
func SignalOr(name string, def Signal) Signal {
	if n, ok := ParseSignal(name); ok {
		return Signal(n)
	}
	return def
}

// SIGTERM and SIGKILL, the defaults of stop and kill.
const (
	SIGTERM Signal = 15
	SIGKILL Signal = 9
)
