package backendtest

import (
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/spec"
)

// TestHostPowerTablePolicy checks every row of the default-deny table
// against the policy alone, without a daemon: refused by default naming
// its field and variable, allowed once that variable is set.
func TestHostPowerTablePolicy(t *testing.T) {
	for _, c := range HostPowerCases {
		t.Run(c.Name, func(t *testing.T) {
			h, err := NewHostEnv(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			a, vols := h.ExpandApp(c.App, c.Volumes)
			a.Image = Image
			p := spec.Project{Name: "p", Services: map[string]spec.App{"app": a}, Volumes: vols}
			field := "services.app." + c.Field
			for key := range vols {
				field = "volumes." + key + "." + c.Field
			}
			err = hostpolicy.Policy{}.Check(p)
			allowVar, _, _ := strings.Cut(c.Allow, "=")
			if err == nil || !strings.Contains(err.Error(), field+": ") || !strings.Contains(err.Error(), allowVar) {
				t.Fatalf("want a refusal naming %s and %s, got %v", field, allowVar, err)
			}
			if err := (hostpolicy.Policy{AllowPrivileged: true, BindPrefixes: []string{h.Dir}}).Check(p); err != nil {
				t.Fatalf("allowed: %v", err)
			}
			if strings.Contains(h.Expand(c.Compose+c.ComposeTop+strings.Join(c.Docker, " ")), "@") {
				t.Errorf("a placeholder is left unexpanded")
			}
		})
	}
}

// TestCapabilityRefusal: a NeedsAllCaps row on a host without every
// capability accepts the runtime's capability error and no other failure
// (issue "Green on a fresh machine", item 6).
func TestCapabilityRefusal(t *testing.T) {
	for msg, want := range map[string]bool{
		"OCI runtime create failed: runc create failed: unable to start container process: unable to apply caps: operation not permitted: unknown": true,
		"OCI runtime exec failed: exec failed: unable to start container process: unable to apply caps: operation not permitted: unknown":          true,
		"crun: capset: Operation not permitted: OCI permission denied":                                                                             true,
		"postCreate[0] hook: privileged exec is not supported by the containerd backend: not implemented":                                          false,
		"start app: operation not permitted": false,
	} {
		if got := CapabilityRefusal(msg); got != want {
			t.Errorf("CapabilityRefusal(%q) = %v, want %v", msg, got, want)
		}
	}
}
