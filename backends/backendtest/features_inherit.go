package backendtest

import (
	"slices"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

func init() {
	featureCases = append(featureCases, featureCase{feature: backends.FeatureInherit,
		name: "a recreated container keeps its anonymous volume, -V renews it, down -v removes it", run: inheritCase})
}

// inheritCase recreates a replica with an anonymous volume three times:
// a changed config keeps the volume (docker compose's default), -V gives
// a new one and the old one goes, down -v leaves none.
func inheritCase(x *env) {
	vi, _ := backends.Want[backends.VolumeInheritor](x.b, backends.FeatureInherit, "inherit")
	anonymous := func() string {
		x.t.Helper()
		m, err := vi.AnonymousVolumes(x.ctx, x.one("app").ID)
		if err != nil || m["/data"] == "" {
			x.t.Fatalf("the anonymous volume at /data: %v %v", m, err)
		}
		return m["/data"]
	}
	a := sleeper("app")
	a.Volumes = []spec.VolumeMount{{Target: "/data"}}
	x.up(x.proj(a))
	x.mustSh("app", "echo kept > /data/f")
	first := anonymous()

	a.Env = map[string]string{"ROUND": "2"}
	x.up(x.proj(a))
	if out := x.mustSh("app", "cat /data/f"); out != "kept" {
		x.t.Fatalf("after a recreate /data/f is %q: the anonymous volume was not kept", out)
	}
	if second := anonymous(); second != first {
		x.t.Errorf("after a recreate the volume at /data is %s, was %s", second, first)
	}

	a.Env = map[string]string{"ROUND": "3"}
	x.up(x.proj(a), engine.UpOptions{RenewAnonVolumes: true})
	if out, _ := x.sh("app", "cat /data/f 2>/dev/null"); out != "" {
		x.t.Fatalf("after up -V /data/f is %q: the volume was not renewed", out)
	}
	third := anonymous()
	if third == first || x.volumeExists(first) {
		x.t.Errorf("after up -V: volume %s (was %s), the old one still there: %t", third, first, x.volumeExists(first))
	}
	if err := x.e.Down(x.ctx, x.project, engine.DownOptions{Volumes: true}); err != nil {
		x.t.Fatal(err)
	}
	if x.volumeExists(third) {
		x.t.Errorf("down -v left the anonymous volume %s", third)
	}
}

// volumeExists reports whether the backend has a volume named name.
func (x *env) volumeExists(name string) bool {
	x.t.Helper()
	vs, err := x.b.ListVolumes(x.ctx, backends.ListOptions{})
	if err != nil {
		x.t.Fatalf("list volumes: %v", err)
	}
	return slices.ContainsFunc(vs, func(v backends.Volume) bool { return v.Name == name })
}
