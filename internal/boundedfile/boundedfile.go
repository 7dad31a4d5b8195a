package boundedfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Kind says what a file is for: it sets the size limit and the words of
// a refusal.
type Kind int

// The kinds of files cornus reads from user input.
const (
	ComposeFile      Kind = iota // -f, COMPOSE_FILE, discovered, include:, extends: file:
	EnvFile                      // --env-file, .env, env_file:, label_file:
	DevcontainerFile             // devcontainer.json
	SpecFile                     // the native deploy.yaml
	SecretFile                   // secrets' and configs' file:
	DockerConfig                 // docker CLI config.json and context meta.json
	ServerState                  // cornus serve's tokens file and state, the client's login file
	Dockerfile                   // a build's Dockerfile and its .dockerignore
)

// Size limits, in bytes. The largest real Compose file, deploy.yaml or
// env file we know of is a few hundred KiB, and a container's whole
// argv+env cannot pass 2 MiB (Linux's default ARG_MAX) anyway, so 8 MiB
// leaves ample room while bounding memory. Secrets and configs get the
// same: swarm caps them at 500 KB and Kubernetes at 1 MiB; large data
// belongs in a volume. A docker config.json holds a few contexts and
// credentials: kilobytes.
const (
	MaxComposeFile      = 8 << 20 // also devcontainer.json and deploy.yaml
	MaxEnvFile          = 8 << 20
	MaxSecretFile       = 8 << 20
	MaxDockerConfigFile = 8 << 20
)

// Max is the size limit of kind k, in bytes.
func (k Kind) Max() int64 {
	switch k {
	case EnvFile:
		return MaxEnvFile
	case SecretFile:
		return MaxSecretFile
	case DockerConfig, ServerState:
		return MaxDockerConfigFile
	}
	return MaxComposeFile
}

// what names the kind in a sentence: "cornus reads at most 8 MiB from <what>".
func (k Kind) what() string {
	switch k {
	case ComposeFile:
		return "a Compose file"
	case EnvFile:
		return "an env file"
	case DevcontainerFile:
		return "a devcontainer.json"
	case SpecFile:
		return "a deploy spec"
	case SecretFile:
		return "a secret or config file"
	case DockerConfig:
		return "a docker config file"
	case ServerState:
		return "a cornus tokens or state file"
	case Dockerfile:
		return "a Dockerfile or .dockerignore"
	}
	return "a file"
}

// fix says what to do about a file that is too large.
func (k Kind) fix() string {
	switch k {
	case EnvFile:
		return "keep large values in files the services mount"
	case SecretFile:
		return "mount large files as a volume instead"
	case DockerConfig:
		return "remove what docker does not need from it"
	case ServerState:
		return "remove entries no longer used"
	}
	return "split it, or keep large data in files the services mount"
}

var (
	// ErrNotRegular matches a refusal of a directory, device, FIFO or socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge matches a refusal of a file over its kind's limit.
	ErrTooLarge = errors.New("file too large")
)

// refusal is an error with a full sentence for users and a class for code.
type refusal struct {
	msg   string
	class error
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.class }

// Check stats path (following symlinks) and refuses anything but a
// regular file within the limit of kind k. It does not open the file:
// opening a device can have side effects (a watchdog, a tape). Errors
// from stat come back as they are, so fs.ErrNotExist can be tested.
// /dev/null passes: it reads as empty (`--env-file /dev/null` is the
// usual way to skip .env).
func Check(path string, k Kind) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return check(path, fi, k)
}

func check(path string, fi fs.FileInfo, k Kind) error {
	if !fi.Mode().IsRegular() {
		if isDevNull(fi) {
			return nil
		}
		return &refusal{
			msg:   fmt.Sprintf("%s is %s, not a regular file: cornus reads %s only from a regular file (save the content to one)", describe(path), fileType(fi.Mode()), k.what()),
			class: ErrNotRegular,
		}
	}
	if fi.Size() > k.Max() {
		return tooLarge(path, k, "is "+size(fi.Size()))
	}
	return nil
}

// Read returns the content of path if it is a regular file within the
// limit of kind k. It checks before opening, opens without blocking (a
// FIFO swapped in after the check cannot hang it), checks the open file
// again, and reads at most limit+1 bytes so a file growing meanwhile is
// refused too.
func Read(path string, k Kind) ([]byte, error) {
	if err := Check(path, k); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := check(path, fi, k); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil // /dev/null
	}
	return readLimited(f, path, k)
}

// ReadFrom reads all of r, refusing more than the limit of kind k. It is
// for streams that are not files a user named, such as stdin for `-f -`;
// name is what errors call it.
func ReadFrom(r io.Reader, name string, k Kind) ([]byte, error) {
	return readLimited(r, name, k)
}

func readLimited(r io.Reader, name string, k Kind) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, k.Max()+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > k.Max() {
		return nil, tooLarge(name, k, "is larger than "+size(k.Max()))
	}
	return b, nil
}

func tooLarge(name string, k Kind, is string) error {
	return &refusal{
		msg:   fmt.Sprintf("%s %s; cornus reads at most %s from %s: %s", name, is, size(k.Max()), k.what(), k.fix()),
		class: ErrTooLarge,
	}
}

// describe names path, and what it points to when it is a symlink: the
// target is what the user needs to see.
func describe(path string) string {
	if l, err := os.Lstat(path); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(path); err == nil {
			return fmt.Sprintf("%s (a symlink to %s)", path, t)
		}
	}
	return path
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}

func isDevNull(fi fs.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}

// size renders n bytes the way the limits are written: 8 MiB, 50.5 MiB.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	case n >= 1<<10:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
