package backendtest

import (
	"bytes"

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
