package cni

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// Locks down configuration: plugin dirs in the documented order from the
// caller's env, explicit options beating the env whatever their order.
func TestNewConfig(t *testing.T) {
	env := []string{"CORNUS_CNI_BIN_DIR=/a", "CNI_PATH=/b:/c::/a", "CORNUS_CNI_SUBNET_BASE=10.77", "PATH=/p"}
	m, err := New("/data", WithEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a", "/b", "/c", "/opt/cni/bin", "/usr/lib/cni"}; !slices.Equal(m.pluginDirs, want) {
		t.Errorf("plugin dirs %q, want %q", m.pluginDirs, want)
	}
	if m.base != [2]byte{10, 77} || m.path != "/p" {
		t.Errorf("base %v path %q", m.base, m.path)
	}
	m, err = New("/data", WithSubnetBase("10.5"), WithPluginDirs("/x"), WithEnv(env))
	if err != nil || m.base != [2]byte{10, 5} || !slices.Equal(m.pluginDirs, []string{"/x"}) {
		t.Errorf("options after env lost: %+v %v", m, err)
	}
	if m, _ := New("/data"); m.base != [2]byte{10, 4} || m.path == "" {
		t.Errorf("defaults: %+v", m)
	}
	for _, bad := range []func() (*Manager, error){
		func() (*Manager, error) { return New("relative") },
		func() (*Manager, error) { return New("/data", WithSubnetBase("10.4.1")) },
		func() (*Manager, error) { return New("/data", WithEnv([]string{"CORNUS_CNI_SUBNET_BASE=x"})) },
	} {
		if _, err := bad(); !errdefs.IsInvalidArgument(err) {
			t.Errorf("want InvalidArgument, got %v", err)
		}
	}
}

// Locks down the missing-plugin message: it names the plugin, the dirs
// searched and the package to install.
func TestCheckMissingPlugin(t *testing.T) {
	dir := t.TempDir()
	m, err := New("/data", WithPluginDirs(dir), WithEnv([]string{"PATH=" + dir}))
	if err != nil {
		t.Fatal(err)
	}
	err = m.Check()
	if !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), `plugin "bridge" not found in `+dir) ||
		!strings.Contains(err.Error(), "apt-get install -y containernetworking-plugins") {
		t.Fatalf("Check = %v", err)
	}
	for _, p := range requiredPlugins() {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Check(); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "apt-get install -y iptables") {
		t.Fatalf("Check without iptables = %v", err)
	}
	if _, err := m.Attach(bg(), AttachOptions{ContainerID: "x", Netns: "/n", Networks: []Endpoint{{Network: "n"}}}); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("Attach without iptables = %v", err)
	}
}
