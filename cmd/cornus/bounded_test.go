package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// zeroReader is an endless stdin, like `< /dev/zero`.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestUnboundedInputRefused: inputs that never end or are far too large —
// stdin for -f -, a FIFO env_file, a .env symlinked to /dev/zero, a
// 50 MiB Compose file — end in an error naming the file, through the real
// CLI; the test finishing at all proves nothing read them whole (hardening
// issue, item 2; the /dev/zero files themselves are corpus cases in
// testdata/invalid).
func TestUnboundedInputRefused(t *testing.T) {
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "app.env"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fifoDir, "compose.yaml", "services:\n  web:\n    image: nginx:1.27\n    env_file: app.env\n")

	dotenvDir := t.TempDir()
	writeFile(t, dotenvDir, "compose.yaml", "services:\n  web:\n    image: nginx:1.27\n")
	if err := os.Symlink("/dev/zero", filepath.Join(dotenvDir, ".env")); err != nil {
		t.Fatal(err)
	}

	bigDir := t.TempDir()
	f, err := os.Create(filepath.Join(bigDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()

	for _, c := range []struct {
		name, dir string
		args      []string
		want      string
	}{
		{"stdin", t.TempDir(), []string{"compose", "-f", "-", "config"},
			"standard input (-f -) is larger than 8 MiB; cornus reads at most 8 MiB from a Compose file"},
		{"FIFO env_file", fifoDir, []string{"compose", "config"},
			"services.web.env_file: " + filepath.Join(fifoDir, "app.env") + " is a named pipe (FIFO), not a regular file"},
		{".env symlink to /dev/zero", dotenvDir, []string{"compose", "config"},
			filepath.Join(dotenvDir, ".env") + " (a symlink to /dev/zero) is a character device, not a regular file"},
		{".env symlink to /dev/zero, name only", dotenvDir, []string{"compose", "ps"},
			filepath.Join(dotenvDir, ".env") + " (a symlink to /dev/zero) is a character device, not a regular file"},
		{"50 MiB Compose file", bigDir, []string{"compose", "config"},
			filepath.Join(bigDir, "compose.yaml") + " is 50 MiB; cornus reads at most 8 MiB from a Compose file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(c.args, streams{In: zeroReader{}, Out: &out, Err: &errb, Environ: []string{"PATH=/usr/bin:/bin"}, Dir: c.dir})
			if code == 0 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant it to say: %s", code, errb.String(), c.want)
			}
		})
	}
}

// TestExecLimitsThroughCompose: an environment value Linux's exec would
// refuse (over MAX_ARG_STRLEN) is a validation error naming the Compose
// field and the limit, without echoing the value (hardening issue, item 2).
func TestExecLimitsThroughCompose(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 200_000)
	writeFile(t, dir, "compose.yaml", "services:\n  web:\n    image: nginx:1.27\n    environment:\n      BIG: "+big+"\n")
	_, stderr, code := runCLI(t, dir, nil, "compose", "config")
	want := "services.web.environment: BIG=... is 200004 bytes; Linux's exec takes at most 131072 per environment entry"
	if code == 0 || !strings.Contains(stderr, want) || strings.Contains(stderr, big) {
		t.Errorf("exit %d, stderr (%d bytes):\n%.400s\nwant it to say: %s", code, len(stderr), stderr, want)
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
