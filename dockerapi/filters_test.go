package dockerapi

import "testing"

func TestParseFilters(t *testing.T) {
	for _, raw := range []string{`{"label":["a=b","c"],"status":["running"]}`, `{"label":{"a=b":true,"c":true},"status":{"running":true}}`} {
		f, err := parseFilters(raw)
		if err != nil || len(f["label"]) != 2 || f["status"][0] != "running" {
			t.Errorf("parseFilters(%s) = %v, %v", raw, f, err)
		}
	}
}

// TestEngineField: refusals name the Engine API field a client sent.
func TestEngineField(t *testing.T) {
	for in, want := range map[string]string{
		"container.capAdd[0]":                    "HostConfig.CapAdd[0]",
		"container.sysctls.kernel.panic":         "HostConfig.Sysctls.kernel.panic",
		"container.mounts[2].source":             "HostConfig.Binds/Mounts",
		"container.volumes[0].driverOpts.device": "HostConfig.Mounts[0].driverOpts.device",
		"container.volumes.data.driverOpts":      "volume data.driverOpts",
		"volume.driverOpts.device":               "DriverOpts.device",
	} {
		if got := engineField(in); got != want {
			t.Errorf("engineField(%q) = %q, want %q", in, got, want)
		}
	}
}
