package backendtest

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/spec"
)

// NoEnvImage is an image whose config has no Env at all, PATH included
// (what `docker import` or FROM scratch with a static binary make). The
// suite loads it where the backend loads images; scripts/k8s.sh imports it
// into the test cluster's node.
const NoEnvImage = "cornus-test/noenv:1"

// DockerDefaultPath is the PATH dockerd gives a container whose image and
// spec set none.
const DockerDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// compatCases are behaviour Compose files written for Docker rely on,
// found by running such files on every backend.
var compatCases = []testCase{
	{
		name:   "image without PATH",
		fields: []string{"image"},
		run: func(x *env) {
			x.ensureImage(NoEnvImage, testimage.Options{Ref: NoEnvImage, NoEnv: true})
			// The main process is found through PATH ("sh"), and so is the
			// exec's.
			a := spec.App{Name: "app", Image: NoEnvImage,
				Command: spec.Command{"sh", "-c", `echo "$PATH" > /tmp/main-path; trap 'exit 0' TERM; while true; do sleep 0.2; done`}}
			x.up(x.proj(a))
			var main string
			x.eventually("the main process writes its PATH", func() string {
				out, code := x.sh("app", "cat /tmp/main-path")
				if code != 0 {
					return errf("cat /tmp/main-path exited %d: %s", code, out)
				}
				main = out
				return ""
			})
			if main != DockerDefaultPath {
				x.t.Fatalf("main process PATH = %q, want Docker's default %q", main, DockerDefaultPath)
			}
			if out := x.mustSh("app", `echo "$PATH"`); out != DockerDefaultPath {
				x.t.Fatalf("exec PATH = %q, want Docker's default %q", out, DockerDefaultPath)
			}
		},
	},
	{
		name:   "bind of a single host file",
		fields: []string{"mounts"},
		sample: func(x *env) spec.App {
			return spec.App{Name: "app", Mounts: []spec.Mount{{Source: x.writeFile("sample.txt", "x\n"), Target: "/x.txt", CreateHostPath: true}}}
		},
		run: func(x *env) {
			// Compose's short syntax (./test_volume.txt:/x.txt) sets
			// createHostPath: a missing source is made a directory, an
			// existing file is bound as that file.
			file := x.writeFile("test_volume.txt", "from a host file\n")
			missing := filepath.Join(x.dir, "made-by-up")
			a := sleeper("app")
			a.Mounts = []spec.Mount{
				{Source: file, Target: "/x.txt", CreateHostPath: true},
				{Source: missing, Target: "/made", CreateHostPath: true},
			}
			x.up(x.proj(a))
			if out := x.mustSh("app", "test -f /x.txt && cat /x.txt"); out != "from a host file" {
				x.t.Fatalf("bound file reads %q", out)
			}
			x.mustSh("app", "echo from the container >> /x.txt")
			if b, err := os.ReadFile(file); err != nil || string(b) != "from a host file\nfrom the container\n" {
				x.t.Fatalf("host file after the container wrote to it: %q, %v", b, err)
			}
			if fi, err := os.Stat(missing); err != nil || !fi.IsDir() {
				x.t.Fatalf("missing bind source: %v, want a directory made", err)
			}
			x.mustSh("app", "test -d /made")
		},
	},
}

func init() { cases = append(cases, compatCases...) }

// ensureImage loads the image o builds unless the backend has ref. A
// backend that cannot load images must have it already (kubernetes: the
// node's runtime, where scripts/k8s.sh imports it).
func (x *env) ensureImage(ref string, o testimage.Options) {
	x.t.Helper()
	images := x.images()
	if _, err := images.InspectImage(x.ctx, ref); err == nil {
		return
	}
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, o); err != nil {
		x.t.Fatalf("build %s: %v", ref, err)
	}
	if _, err := images.LoadImage(x.ctx, &buf); err != nil {
		if errdefs.IsNotImplemented(err) {
			x.t.Fatalf("%s is not on the %s backend, which cannot load it (scripts/k8s.sh imports it into the test cluster): %v", ref, x.b.Name(), err)
		}
		x.t.Fatalf("load %s: %v", ref, err)
	}
}
