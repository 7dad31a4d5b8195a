package plugin

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/cornus-dev/cornus/internal/buildinfo"
)

// Locks down the `docker-cli-plugin-metadata` answer: one JSON object with
// the docker CLI's field names, schema 0.1.0 and cornus's version.
func TestWriteMetadata(t *testing.T) {
	var out bytes.Buffer
	if err := WriteMetadata(&out); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("metadata is not JSON: %v\n%s", err, out.String())
	}
	if dec.More() {
		t.Fatalf("more than one JSON value in the metadata")
	}
	want := map[string]any{
		"SchemaVersion":    "0.1.0",
		"Vendor":           "cornus",
		"Version":          buildinfo.Version(),
		"ShortDescription": ShortDescription,
		"URL":              URL,
	}
	if len(m) != len(want) {
		t.Errorf("fields = %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

// Locks down plugin-mode detection by argv[0]'s basename.
func TestIsPluginBinary(t *testing.T) {
	for argv0, want := range map[string]bool{
		"docker-cornus": true,
		"/home/u/.docker/cli-plugins/docker-cornus":        true,
		`C:\Users\u\.docker\cli-plugins\docker-cornus.exe`: false, // backslashes are not separators on Linux
		"docker-cornus.exe":                                true,
		"cornus":                                           false,
		"/usr/local/bin/cornus":                            false,
		"docker-compose":                                   false,
		"docker-cornus-dev":                                false,
	} {
		if got := IsPluginBinary(argv0); got != want {
			t.Errorf("IsPluginBinary(%q) = %v, want %v", argv0, got, want)
		}
	}
	if !IsMetadataRequest([]string{"docker-cli-plugin-metadata"}) || IsMetadataRequest([]string{"cornus", "docker-cli-plugin-metadata"}) || IsMetadataRequest(nil) {
		t.Error("IsMetadataRequest: wrong answer")
	}
}
