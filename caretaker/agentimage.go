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
	"strings"
	"sync"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/dockerarchive"
	"github.com/cornus-dev/cornus/internal/envlist"
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
	layer, err := agentLayer(exe)
	if err != nil {
		return err
	}
	return dockerarchive.Write(w, agentImage(ref), layer)
}

func agentImage(ref string) dockerarchive.Image {
	return dockerarchive.Image{Ref: ref, Entrypoint: []string{AgentBinary, "caretaker"}, Env: []string{}}
}

// agentLayer is the image's one layer: the same binary makes the same
// bytes (and so the same image ID).
func agentLayer(exe string) ([]byte, error) {
	bin, err := os.ReadFile(exe)
	if err != nil {
		return nil, fmt.Errorf("agent image: %w", err)
	}
	if len(bin) > maxAgentBinary {
		return nil, fmt.Errorf("agent image: %s is larger than %d bytes", exe, maxAgentBinary)
	}
	if f, err := elf.NewFile(bytes.NewReader(bin)); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return nil, fmt.Errorf("agent image: %s is dynamically linked and cannot run alone in a container; build cornus with CGO_ENABLED=0, or set %s", exe, EnvAgentImage)
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
			return nil, err
		}
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return layer.Bytes(), nil
}

var agentIDs sync.Map // executable path → image ID, once computed

// AgentImageID is the ID (config digest) of the agent image of exe: what
// the backend's image tagged AgentRef must have. The tag alone proves
// nothing: whoever could write a tag in the backend's store could make
// companions (root, with a deployment's caretaker token) run their code.
func AgentImageID(exe string) (string, error) {
	if id, ok := agentIDs.Load(exe); ok {
		return id.(string), nil
	}
	ref, err := AgentRef(exe)
	if err != nil {
		return "", err
	}
	layer, err := agentLayer(exe)
	if err != nil {
		return "", err
	}
	id, err := dockerarchive.ImageID(agentImage(ref), layer)
	if err != nil {
		return "", err
	}
	agentIDs.Store(exe, id)
	return id, nil
}

// EnsureAgentImage returns the companion image for b: CORNUS_AGENT_IMAGE
// when set (the operator's choice), else the image of the running
// binary, built and loaded into b unless b has it already, verified by
// its content digest, never trusted by its tag.
func EnsureAgentImage(ctx context.Context, b backends.Backend, environ []string) (string, error) {
	if v := envlist.Get(environ, EnvAgentImage); v != "" {
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
	want, err := AgentImageID(exe)
	if err != nil {
		return "", err
	}
	img, err := images.InspectImage(ctx, ref)
	switch {
	case err == nil && sameImageID(img.ID, want):
		return ref, nil
	case err != nil && !errdefs.IsNotFound(err):
		return "", fmt.Errorf("agent image %s: %w", ref, err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(BuildAgentImage(pw, exe, ref)) }()
	_, lerr := images.LoadImage(ctx, pr)
	pr.CloseWithError(errors.New("load ended"))
	if errdefs.IsNotImplemented(lerr) && err == nil {
		// A runtime that takes no loads (kubernetes: images are imported
		// into its nodes by the operator) holds what its operator put there.
		return ref, nil
	}
	if lerr != nil {
		return "", fmt.Errorf("load agent image %s: %w", ref, lerr)
	}
	if img, err = images.InspectImage(ctx, ref); err != nil {
		return "", fmt.Errorf("agent image %s: %w", ref, err)
	}
	if !sameImageID(img.ID, want) {
		return "", fmt.Errorf("agent image %s is %s after loading, not %s: something rewrites this tag", ref, img.ID, want)
	}
	return ref, nil
}

// sameImageID compares IDs with or without their "sha256:" (podman
// drops it).
func sameImageID(a, b string) bool {
	return strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}
