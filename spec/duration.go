package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written in Compose syntax: a sequence of
// number+unit pairs ("1m30s", "1.5h", "2d"), units ns, us, µs, ms, s, m, h, d, w.
type Duration time.Duration

// Std returns the duration as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// DurationOf is a convenience for building specs in code.
func DurationOf(d time.Duration) *Duration { v := Duration(d); return &v }

var durationUnits = []struct {
	name string
	size time.Duration
}{
	{"ns", time.Nanosecond}, {"us", time.Microsecond}, {"µs", time.Microsecond},
	{"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour},
	{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour},
}

// ParseDuration parses Compose duration syntax. A bare "0" is accepted.
func ParseDuration(s string) (Duration, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, fmt.Errorf("invalid duration %q: empty", orig)
	}
	var total float64
	for s != "" {
		i := 0
		for i < len(s) && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9')) {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("invalid duration %q: expected a number such as 10s or 1m30s", orig)
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: expected a number such as 10s or 1m30s", orig)
		}
		s = s[i:]
		j := 0
		for j < len(s) && (s[j] < '0' || s[j] > '9') && s[j] != '.' {
			j++
		}
		unit := s[:j]
		s = s[j:]
		size, ok := unitSize(unit)
		if !ok {
			if unit == "" {
				return 0, fmt.Errorf("invalid duration %q: missing unit (use ns, us, ms, s, m, h, d or w)", orig)
			}
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use ns, us, ms, s, m, h, d or w)", orig, unit)
		}
		total += n * float64(size)
		if total > float64(1<<63-1) {
			return 0, fmt.Errorf("invalid duration %q: too large", orig)
		}
	}
	return Duration(total), nil
}

func unitSize(unit string) (time.Duration, bool) {
	for _, u := range durationUnits {
		if u.name == unit {
			return u.size, true
		}
	}
	return 0, false
}

// String formats the duration compactly: "1m30s", "10s", "1h", "500ms".
func (d Duration) String() string {
	v := time.Duration(d)
	if v == 0 {
		return "0s"
	}
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
		v = -v
	}
	for _, u := range []struct {
		name string
		size time.Duration
	}{{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}, {"ns", time.Nanosecond}} {
		if n := v / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			v -= n * u.size
		}
	}
	return b.String()
}

// MarshalYAML writes the compact string form.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes the compact string form.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalYAML accepts a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("expected a duration string such as 10s")
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// UnmarshalJSON accepts a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expected a duration string such as 10s")
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
