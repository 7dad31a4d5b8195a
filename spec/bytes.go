package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bytes is a size in bytes, written as Docker does: a plain number of bytes
// or a number with a binary unit suffix b, k, m, g, t (optionally followed
// by "b" or "ib"): "512m", "1.5g", "64kb".
type Bytes int64

var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseBytes parses a size.
func ParseBytes(s string) (Bytes, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && (t[i] == '.' || (t[i] >= '0' && t[i] <= '9')) {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: expected a number with an optional unit such as 512m or 1g", s)
	}
	n, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: expected a number with an optional unit such as 512m or 1g", s)
	}
	mult, ok := byteUnits[strings.TrimSpace(t[i:])]
	if !ok {
		return 0, fmt.Errorf("invalid size %q: unknown unit %q (use b, k, m, g or t)", s, t[i:])
	}
	v := n * float64(mult)
	if v > float64(1<<62) {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return Bytes(v), nil
}

// String writes the largest exact unit: 536870912 → "512m".
func (b Bytes) String() string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		if b != 0 && int64(b)%u.size == 0 {
			return strconv.FormatInt(int64(b)/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// MarshalYAML writes the unit form.
func (b Bytes) MarshalYAML() (any, error) { return b.String(), nil }

// MarshalJSON writes the unit form.
func (b Bytes) MarshalJSON() ([]byte, error) { return json.Marshal(b.String()) }

// UnmarshalYAML accepts a number of bytes or a size string.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("expected a size such as 512m")
	}
	v, err := ParseBytes(n.Value)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// UnmarshalJSON accepts a number of bytes or a size string.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		var n int64
		if err := json.Unmarshal(data, &n); err != nil {
			return fmt.Errorf("expected a size such as 512m")
		}
		*b = Bytes(n)
		return nil
	}
	v, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}
