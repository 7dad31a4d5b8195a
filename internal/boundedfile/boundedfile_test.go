package boundedfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead locks down what a user-named file may be: a regular file (or
// /dev/null) within its kind's limit, refused before reading otherwise
// with the file named and what it is said (hardening issue, item 2).
func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "compose.yaml")
	if err := os.WriteFile(regular, []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size alone must refuse it, nothing is read.
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, path string
		class      error
		want       string // in the message
	}{
		{"regular file", regular, nil, ""},
		{"/dev/null reads as empty", os.DevNull, nil, ""},
		{"too large", big, ErrTooLarge, big + " is 50 MiB; cornus reads at most 8 MiB from a Compose file"},
		{"/dev/zero", "/dev/zero", ErrNotRegular, "/dev/zero is a character device, not a regular file"},
		{"FIFO", fifo, ErrNotRegular, fifo + " is a named pipe (FIFO), not a regular file"},
		{"directory", dir, ErrNotRegular, dir + " is a directory, not a regular file"},
		{"symlink to /dev/zero", link, ErrNotRegular, link + " (a symlink to /dev/zero) is a character device"},
		{"missing", filepath.Join(dir, "nope"), fs.ErrNotExist, "no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Read(c.path, ComposeFile)
			if c.class == nil {
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				if c.path == regular && string(b) != "services: {}\n" {
					t.Errorf("content %q", b)
				}
				if err := Check(c.path, ComposeFile); err != nil {
					t.Errorf("Check: %v", err)
				}
				return
			}
			if !errors.Is(err, c.class) {
				t.Fatalf("Read: got %v, want class %v", err, c.class)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read: %q does not say %q", err, c.want)
			}
			if err := Check(c.path, ComposeFile); !errors.Is(err, c.class) {
				t.Errorf("Check: got %v, want class %v", err, c.class)
			}
		})
	}
}

// TestReadFromBounded: a stream (stdin for `-f -`) is cut at the limit,
// so /dev/zero on stdin ends with an error instead of filling memory.
func TestReadFromBounded(t *testing.T) {
	z, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	_, err = ReadFrom(z, "standard input", EnvFile)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "standard input is larger than 8 MiB; cornus reads at most 8 MiB from an env file") {
		t.Fatalf("got %v", err)
	}
	b, err := ReadFrom(strings.NewReader("A=1\n"), "standard input", EnvFile)
	if err != nil || string(b) != "A=1\n" {
		t.Fatalf("got %q, %v", b, err)
	}
}
