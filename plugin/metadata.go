package plugin

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/cornus-dev/cornus/internal/buildinfo"
)

// Names the docker CLI plugin protocol fixes.
const (
	// Name is the plugin's name: `docker cornus`.
	Name = "cornus"
	// BinaryName is the executable the docker CLI looks for in cli-plugins.
	BinaryName = "docker-" + Name
	// MetadataCommand is the argument the docker CLI runs the plugin with
	// to read its Metadata.
	MetadataCommand = "docker-cli-plugin-metadata"
	// SchemaVersion is the metadata schema version the docker CLI accepts.
	SchemaVersion = "0.1.0"
	// Vendor is who the docker CLI lists as the plugin's vendor.
	Vendor = "cornus"
	// URL is shown by `docker info` next to the plugin.
	URL = "https://github.com/cornus-dev/cornus"
	// ShortDescription is the line `docker --help` shows for the plugin.
	ShortDescription = "Deploy Compose projects and devcontainers to any container runtime"
)

// Metadata is the JSON the plugin prints for MetadataCommand; field names
// and casing are the docker CLI's (cli-plugins/metadata.Metadata).
type Metadata struct {
	SchemaVersion    string `json:",omitempty"`
	Vendor           string `json:",omitempty"`
	Version          string `json:",omitempty"`
	ShortDescription string `json:",omitempty"`
	URL              string `json:",omitempty"`
}

// NewMetadata describes this build of cornus.
func NewMetadata() Metadata {
	return Metadata{
		SchemaVersion:    SchemaVersion,
		Vendor:           Vendor,
		Version:          buildinfo.Version(),
		ShortDescription: ShortDescription,
		URL:              URL,
	}
}

// WriteMetadata writes NewMetadata as one JSON object.
func WriteMetadata(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(NewMetadata()); err != nil {
		return fmt.Errorf("write plugin metadata: %w", err)
	}
	return nil
}

// IsPluginBinary reports whether argv0 (os.Args[0]) names the plugin
// executable, i.e. the binary was started as docker-cornus.
func IsPluginBinary(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == BinaryName
}

// IsMetadataRequest reports whether args (os.Args[1:]) are the docker CLI's
// metadata request.
func IsMetadataRequest(args []string) bool {
	return len(args) > 0 && args[0] == MetadataCommand
}
