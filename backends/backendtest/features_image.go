package backendtest

import (
	"archive/tar"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Export and commit: what a container wrote, read back from its
// filesystem's tar and from an image made of it.
func init() {
	featureCases = append(featureCases,
		featureCase{feature: backends.FeatureExport, name: "export writes the image's files and the container's changes, no volume", run: exportCase},
		featureCase{feature: backends.FeatureCommit, name: "commit makes an image holding the container's changes and the changes asked", run: commitCase},
	)
}

func exportCase(x *env) {
	a := sleeper("app")
	a.Volumes = []spec.VolumeMount{{Source: "data", Target: "/data"}}
	p := x.proj(a)
	p.Volumes = map[string]spec.Volume{"data": {}}
	x.up(p)
	x.mustSh("app", "echo changed > /tmp/changed.txt && echo in-volume > /data/v.txt && rm /bin/true")
	ex, _ := backends.Want[backends.Exporter](x.b, backends.FeatureExport, "export")
	rc, err := ex.Export(x.ctx, x.one("app").ID)
	if err != nil {
		x.t.Fatalf("export: %v", err)
	}
	defer rc.Close()
	files := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			x.t.Fatalf("export: read the tar: %v", err)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(h.Name, "./"), "/")
		body := ""
		if h.Typeflag == tar.TypeReg && h.Size < 1<<10 {
			b, _ := io.ReadAll(tr)
			body = string(b)
		}
		files[name] = body
	}
	if got, ok := files["tmp/changed.txt"]; !ok || got != "changed\n" {
		x.t.Errorf("export: the container's change tmp/changed.txt is %q (present %v)", got, ok)
	}
	if _, ok := files["bin/sh"]; !ok {
		x.t.Errorf("export: the image's bin/sh is missing (%d entries)", len(files))
	}
	if _, ok := files["bin/true"]; ok {
		x.t.Error("export: bin/true, which the container removed, is in the tar")
	}
	if _, ok := files["data/v.txt"]; ok {
		x.t.Error("export: a volume's file data/v.txt is in the tar")
	}
}

func commitCase(x *env) {
	x.up(x.proj(sleeper("app")))
	x.mustSh("app", "echo committed > /tmp/committed.txt")
	cm, _ := backends.Want[backends.Committer](x.b, backends.FeatureCommit, "commit")
	ref := "cornus-test/commit-" + x.project + ":1"
	id, err := cm.Commit(x.ctx, x.one("app").ID, backends.CommitOptions{
		Reference: ref, Author: "Tester <t@example.test>", Message: "from the contract",
		Changes: []string{"ENV COMMITTED=yes", `CMD ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]`},
	})
	if err != nil {
		x.t.Fatalf("commit: %v", err)
	}
	x.built = append(x.built, id)
	img, err := x.images().InspectImage(x.ctx, ref)
	if err != nil {
		x.t.Fatalf("the committed image %s: %v", ref, err)
	}
	if !sameImageID(img.ID, id) {
		x.t.Errorf("commit returned %s, the image %s is %s", id, ref, img.ID)
	}
	if !slices.Contains(img.Env, "COMMITTED=yes") || len(img.Cmd) != 3 || img.Cmd[0] != "sh" {
		x.t.Errorf("the committed image's config did not take the changes: env %v, cmd %v", img.Env, img.Cmd)
	}
	p := x.proj(spec.App{Name: "again", Image: ref})
	x.up(p)
	if out := x.mustSh("again", "cat /tmp/committed.txt; echo $COMMITTED"); out != "committed\nyes" {
		x.t.Errorf("a container of the committed image sees %q", out)
	}
}

// sameImageID compares image IDs with or without their sha256: prefix.
func sameImageID(a, b string) bool {
	return strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}
