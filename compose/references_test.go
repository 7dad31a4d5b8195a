package compose

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// TestReferencedFilesChecked: files compose-go reads by itself are checked
// first, however they are reached — an interpolated include, an extends
// inside an included file, an include's default .env — while /dev/null and
// optional missing env files keep working (hardening issue, item 2).
func TestReferencedFilesChecked(t *testing.T) {
	write := func(dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("extends in an interpolated include", func(t *testing.T) {
		dir := t.TempDir()
		write(dir, "compose.yaml", "include:\n  - ${SUB}/compose.yaml\n")
		write(dir, "sub/compose.yaml", "services:\n  db:\n    image: busybox\n    extends: {file: base.yaml, service: base}\n")
		if err := syscall.Mkfifo(filepath.Join(dir, "sub", "base.yaml"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(context.Background(), Options{WorkingDir: dir, Environ: []string{"SUB=sub"}})
		if !errors.Is(err, boundedfile.ErrNotRegular) || !strings.Contains(err.Error(), "include: services.db.extends.file: "+filepath.Join(dir, "sub", "base.yaml")+" is a named pipe") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("include's default .env", func(t *testing.T) {
		dir := t.TempDir()
		write(dir, "compose.yaml", "include:\n  - path: sub/compose.yaml\n")
		write(dir, "sub/compose.yaml", "services:\n  db:\n    image: busybox\n")
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "sub", ".env")); err != nil {
			t.Fatal(err)
		}
		_, err := Load(context.Background(), Options{WorkingDir: dir})
		if !errors.Is(err, boundedfile.ErrNotRegular) || !strings.Contains(err.Error(), "include: env_file: "+filepath.Join(dir, "sub", ".env")+" (a symlink to /dev/zero)") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("env files still resolve", func(t *testing.T) {
		dir := t.TempDir()
		write(dir, "compose.yaml", "services:\n  web:\n    image: busybox\n    env_file:\n      - app.env\n      - /dev/null\n      - {path: absent.env, required: false}\n    label_file: labels.env\n    environment: {B: from-compose}\n")
		write(dir, "app.env", "A=from-file\nB=overridden\n")
		write(dir, "labels.env", "team=core\n")
		r, err := Load(context.Background(), Options{WorkingDir: dir, EnvFiles: []string{os.DevNull}})
		if err != nil {
			t.Fatal(err)
		}
		s := r.Project.Services["web"]
		if a, b := s.Environment["A"], s.Environment["B"]; a == nil || *a != "from-file" || b == nil || *b != "from-compose" || s.Labels["team"] != "core" {
			t.Errorf("environment %v, labels %v", s.Environment, s.Labels)
		}
	})
}
