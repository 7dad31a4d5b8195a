//go:build !windows

package client

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// CheckAgent takes a listening socket and refuses a plain file or nothing.
func TestCheckAgent(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := CheckAgent(sock); err != nil {
		t.Errorf("a socket: %v", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(dir, "missing")} {
		if err := CheckAgent(p); err == nil {
			t.Errorf("CheckAgent(%s) accepted it", p)
		}
	}
}
