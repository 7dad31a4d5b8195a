// Package testimage builds small container images locally, with no
// registry: a single-layer docker-archive holding the host's static busybox
// (every applet linked), /etc/passwd and /etc/group, and /tmp; optionally
// small static Go helpers busybox lacks (tools.go). Tests and the
// demo load it into each runtime with its image-load API.
package testimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/cornus-dev/cornus/internal/dockerarchive"
)

// BusyboxPath is where Debian's busybox-static installs the binary.
const BusyboxPath = "/bin/busybox"

// Options shape the image.
type Options struct {
	Ref        string            // e.g. cornus-test/busybox:1
	Entrypoint []string          // default none
	Cmd        []string          // default ["sh"]
	Files      map[string]string // extra files (path → content), mode 0755
	// NoEnv leaves the image config without any Env, PATH included (what
	// `docker import` or FROM scratch with a static binary make); the
	// default is a standard PATH.
	NoEnv   bool
	Busybox string // path of a static busybox; default BusyboxPath
	// UDPSink adds /bin/udpsink PORT FILE (a UDP receiver busybox lacks),
	// built from this module with the go tool.
	UDPSink bool
	OnBuild []string // ONBUILD triggers
}

var epoch = dockerarchive.Epoch

// BuildBusybox writes a docker-archive tar of the image to w.
func BuildBusybox(w io.Writer, o Options) error {
	bb := o.Busybox
	if bb == "" {
		bb = BusyboxPath
	}
	bin, err := os.ReadFile(bb)
	if err != nil {
		return fmt.Errorf("read busybox (apt-get install busybox-static): %w", err)
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return fmt.Errorf("list busybox applets: %w", err)
	}
	applets := strings.Fields(string(out))
	sort.Strings(applets)

	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: epoch})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []struct {
		name string
		mode int64
	}{{"bin", 0o755}, {"etc", 0o755}, {"tmp", 0o1777}, {"root", 0o700}, {"home", 0o755}, {"var", 0o755}, {"run", 0o755}, {"proc", 0o555}, {"sys", 0o555}, {"dev", 0o755}, {"usr", 0o755}, {"usr/bin", 0o755}, {"sbin", 0o755}} {
		if err := dir(d.name, d.mode); err != nil {
			return err
		}
	}
	if err := file("bin/busybox", 0o755, bin); err != nil {
		return err
	}
	for _, a := range applets {
		if a == "busybox" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, ModTime: epoch}); err != nil {
			return err
		}
	}
	etc := map[string]string{
		"etc/passwd":   "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\napp:x:1000:1000:app:/home/app:/bin/sh\n",
		"etc/group":    "root:x:0:\nnogroup:x:65534:\napp:x:1000:\n",
		"etc/hostname": "busybox\n",
	}
	for _, name := range sortedKeys(etc) {
		if err := file(name, 0o644, []byte(etc[name])); err != nil {
			return err
		}
	}
	if o.UDPSink {
		bin, err := udpSink()
		if err != nil {
			return err
		}
		if err := file("bin/udpsink", 0o755, bin); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(o.Files) {
		if err := file(strings.TrimPrefix(name, "/"), 0o755, []byte(o.Files[name])); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	img := dockerarchive.Image{Ref: o.Ref, Entrypoint: o.Entrypoint, Cmd: o.Cmd, OnBuild: o.OnBuild}
	if o.NoEnv {
		img.Env = []string{}
	}
	return dockerarchive.Write(w, img, layer.Bytes())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
