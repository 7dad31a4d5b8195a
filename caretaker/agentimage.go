package caretaker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/dockerarchive"
)

// EnvAgentImage names the companion image to use instead of building one.
const EnvAgentImage = "CORNUS_AGENT_IMAGE"

// AgentRepo is the repository of the images built from this binary; the
// tag is the binary's digest, so a new binary makes a new image and an
// unchanged one reuses it.
const AgentRepo = "cornus-agent"

// AgentBinary is where the image holds the cornus binary.
const AgentBinary = "/cornus"

// maxAgentBinary bounds the executable read into the image.
const maxAgentBinary = 256 << 20

var agentRefs sync.Map // executable path → ref, once hashed

// AgentRef is the agent image reference for the executable at exe.
func AgentRef(exe string) (string, error) {
	if ref, ok := agentRefs.Load(exe); ok {
		return ref.(string), nil
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("agent image: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxAgentBinary)); err != nil {
		return "", fmt.Errorf("agent image: read %s: %w", exe, err)
	}
	ref := AgentRepo + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	agentRefs.Store(exe, ref)
	return ref, nil
}

// BuildAgentImage writes the agent image of the static executable exe as
// a docker-archive: the binary at /cornus, a /tmp, nothing else.
func BuildAgentImage(w io.Writer, exe, ref string) error {
	bin, err := os.ReadFile(exe)
	if err != nil {
		return fmt.Errorf("agent image: %w", err)
	}
	if len(bin) > maxAgentBinary {
		return fmt.Errorf("agent image: %s is larger than %d bytes", exe, maxAgentBinary)
	}
	if f, err := elf.NewFile(bytes.NewReader(bin)); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return fmt.Errorf("agent image: %s is dynamically linked and cannot run alone in a container; build cornus with CGO_ENABLED=0, or set %s", exe, EnvAgentImage)
			}
		}
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777, ModTime: dockerarchive.Epoch},
		{Typeflag: tar.TypeReg, Name: AgentBinary[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: dockerarchive.Epoch},
	} {
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	if _, err := tw.Write(bin); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return dockerarchive.Write(w, dockerarchive.Image{Ref: ref, Entrypoint: []string{AgentBinary, "caretaker"}, Env: []string{}}, layer.Bytes())
}

// EnsureAgentImage returns the companion image for b: CORNUS_AGENT_IMAGE
// when set, else the image of the running binary, built and loaded into
// b unless it is there already.
func EnsureAgentImage(ctx context.Context, b backends.Backend, environ []string) (string, error) {
	if v := envValue(environ, EnvAgentImage); v != "" {
		return v, nil
	}
	images, err := backends.Want[backends.Images](b, backends.FeatureImages, "the caretaker's agent image")
	if err != nil {
		return "", fmt.Errorf("%w (or set %s to an image the backend has)", err, EnvAgentImage)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("agent image: %w", err)
	}
	ref, err := AgentRef(exe)
	if err != nil {
		return "", err
	}
	if _, err := images.InspectImage(ctx, ref); err == nil {
		return ref, nil
	} else if !errdefs.IsNotFound(err) {
		return "", fmt.Errorf("agent image %s: %w", ref, err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(BuildAgentImage(pw, exe, ref)) }()
	_, err = images.LoadImage(ctx, pr)
	pr.CloseWithError(errors.New("load ended"))
	if err != nil {
		return "", fmt.Errorf("load agent image %s: %w", ref, err)
	}
	return ref, nil
}

func cutEnv(kv, key string) (string, bool) {
	if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
		return kv[len(key)+1:], true
	}
	return "", false
}
