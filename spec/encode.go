package spec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// EncodeYAML renders the project as deploy.yaml text (two-space indent,
// keys in a stable order). The output loads back with Load.
func (p Project) EncodeYAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	return buf.Bytes(), nil
}

// EncodeJSON renders the project as indented JSON, as EncodeYAML does
// (without where it was loaded from).
func (p Project) EncodeJSON() ([]byte, error) {
	p.ConfigFiles, p.WorkingDir = nil, ""
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	return append(b, '\n'), nil
}
