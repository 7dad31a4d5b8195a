package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FileMode is a permission mode, written in octal ("0644", "1777"). YAML and
// JSON numbers are taken as they are (YAML's 0o644 is octal already).
type FileMode uint32

// ParseFileMode parses an octal mode string: "644", "0644", "0o644".
func ParseFileMode(s string) (FileMode, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0o"), "0O")
	v, err := strconv.ParseUint(t, 8, 32)
	if err != nil || v > 0o7777 {
		return 0, fmt.Errorf("invalid mode %q: expected an octal mode such as 0644", s)
	}
	return FileMode(v), nil
}

func (m FileMode) String() string { return fmt.Sprintf("0%o", uint32(m)) }

// MarshalYAML writes the octal string.
func (m FileMode) MarshalYAML() (any, error) { return m.String(), nil }

// MarshalJSON writes the octal string.
func (m FileMode) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

// UnmarshalYAML accepts an octal string or a YAML integer.
func (m *FileMode) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("expected an octal mode such as \"0644\"")
	}
	if n.Tag == "!!int" {
		var v uint32
		if err := n.Decode(&v); err != nil || v > 0o7777 {
			return fmt.Errorf("invalid mode %s: expected an octal mode such as \"0644\"", n.Value)
		}
		*m = FileMode(v)
		return nil
	}
	v, err := ParseFileMode(n.Value)
	*m = v
	return err
}

// UnmarshalJSON accepts an octal string or a number.
func (m *FileMode) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := ParseFileMode(s)
		*m = v
		return err
	}
	var v uint32
	if err := json.Unmarshal(b, &v); err != nil || v > 0o7777 {
		return fmt.Errorf("invalid mode %s: expected an octal mode such as \"0644\"", b)
	}
	*m = FileMode(v)
	return nil
}
