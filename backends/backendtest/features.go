package backendtest

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// featureCase proves one optional feature's behaviour on a backend that
// declares it (floor.go checks which features a backend must declare).
type featureCase struct {
	feature backends.Feature
	name    string
	run     func(x *env)
}

var featureCases = []featureCase{
	{
		feature: backends.FeatureCopy,
		name:    "copy in and out, never through a planted link to the host",
		run: func(x *env) {
			x.up(x.proj(sleeper("app")))
			id := x.one("app").ID
			cp, _ := backends.Want[backends.Copier](x.b, backends.FeatureCopy, "copy")
			x.mustSh("app", "ln -s /etc /tmp/hostetc && echo inside > /tmp/out.txt")
			if err := cp.CopyTo(x.ctx, id, "/tmp", tarOf(x.t, "in.txt", "copied-in\n")); err != nil {
				x.t.Fatal(err)
			}
			if out := x.mustSh("app", "cat /tmp/in.txt"); out != "copied-in" {
				x.t.Fatalf("after copy in: %q", out)
			}
			// The container's /etc, not the host's.
			name := "cornus-copy-" + x.project
			if err := cp.CopyTo(x.ctx, id, "/tmp/hostetc", tarOf(x.t, name, "x")); err != nil {
				x.t.Fatal(err)
			}
			if _, err := os.Lstat("/etc/" + name); err == nil {
				os.Remove("/etc/" + name)
				x.t.Fatalf("a copy through a link the container planted wrote the host's /etc/%s", name)
			}
			x.mustSh("app", "test -f /etc/"+name)
			rc, st, err := cp.CopyFrom(x.ctx, id, "/tmp/out.txt")
			if err != nil {
				x.t.Fatal(err)
			}
			defer rc.Close()
			tr := tar.NewReader(rc)
			hdr, err := tr.Next()
			if err != nil {
				x.t.Fatal(err)
			}
			body, _ := io.ReadAll(tr)
			if hdr.Name != "out.txt" || string(body) != "inside\n" || st.Size != 7 {
				x.t.Fatalf("copy out: entry %q = %q, stat %+v", hdr.Name, body, st)
			}
			if st, err := cp.StatPath(x.ctx, id, "/tmp/hostetc"); err != nil || st.LinkTarget != "/etc" {
				x.t.Fatalf("stat of a link: %+v %v", st, err)
			}
			if _, err := cp.StatPath(x.ctx, id, "/no/such/path"); !errdefs.IsNotFound(err) {
				x.t.Fatalf("stat of a missing path: want NotFound, got %v", err)
			}
		},
	},
}

// runFeatureCases runs the cases of every feature b declares.
func runFeatureCases(t *testing.T, b backends.Backend) {
	for _, c := range featureCases {
		if !b.Capabilities().Has(c.feature) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(newEnv(t, b))
		})
	}
}

func tarOf(t *testing.T, name, body string) io.Reader {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	return &b
}
