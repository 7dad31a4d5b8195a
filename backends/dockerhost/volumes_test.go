package dockerhost

import (
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down named volumes (EnsureVolume by labels, runtime names,
// read-only, data kept across containers), anonymous volumes and tmpfs
// size and mode.
func TestVolumesAndTmpfs(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	volName := project + "_data"
	cleanupVolume(t, b, volName)
	vs := backends.VolumeSpec{Project: project, Key: "data", Volume: spec.Volume{Name: volName, Labels: map[string]string{"tier": "x"}}}
	v, err := b.EnsureVolume(ctx, vs)
	if err != nil || v.Name != volName || v.Labels[backends.LabelVolume] != "data" || v.Labels["tier"] != "x" || v.Mountpoint == "" {
		t.Fatalf("EnsureVolume: %v %+v", err, v)
	}
	if again, err := b.EnsureVolume(ctx, vs); err != nil || again.Name != volName {
		t.Fatalf("EnsureVolume again: %v %+v", err, again)
	}
	if l, err := b.ListVolumes(ctx, backends.ListOptions{Labels: map[string]string{backends.LabelProject: project}}); err != nil || len(l) != 1 {
		t.Fatalf("ListVolumes: %v %+v", err, l)
	}
	if _, err := b.EnsureVolume(ctx, backends.VolumeSpec{Project: project, Key: "ext", Volume: spec.Volume{Name: project + "-missing", External: true}}); !errdefs.IsNotFound(err) {
		t.Fatalf("missing external volume: %v (want NotFound)", err)
	}
	withVols := func(cs *backends.ResolveInput) { cs.Volumes = map[string]spec.Volume{"data": {Name: volName}} }

	writer := createApp(t, b, project, spec.App{
		Name:    "writer",
		Command: sh("echo kept > /data/f && sleep 60"),
		Volumes: []spec.VolumeMount{{Source: "data", Target: "/data"}, {Target: "/anon"}},
		Tmpfs:   []spec.Tmpfs{{Target: "/scratch", Size: spec.Bytes(1 << 20), Mode: 0o1770}},
	}, withVols)
	if err := b.Start(ctx, writer.ID); err != nil {
		t.Fatal(err)
	}
	if code, out := execOut(t, b, writer.ID, "stat", "-c", "%a", "/scratch"); code != 0 || trimmed(out) != "1770" {
		t.Fatalf("tmpfs mode: %d %q", code, out)
	}
	if code, out := execOut(t, b, writer.ID, "sh", "-c", "grep ' /scratch ' /proc/mounts"); code != 0 || !strings.Contains(out, "tmpfs") || !strings.Contains(out, "size=1024k") {
		t.Fatalf("tmpfs mount: %d %q", code, out)
	}
	d, err := b.Inspect(ctx, writer.ID)
	if err != nil {
		t.Fatal(err)
	}
	var named, anon bool
	for _, m := range d.Mounts {
		named = named || (m.Type == "volume" && m.Name == volName && m.Destination == "/data" && !m.ReadOnly)
		anon = anon || (m.Type == "volume" && m.Name != "" && m.Name != volName && m.Destination == "/anon")
	}
	if !named || !anon {
		t.Fatalf("mounts: %+v", d.Mounts)
	}
	eventually(t, 5e9, "file in the volume", func() bool {
		code, _ := execOut(t, b, writer.ID, "test", "-f", "/data/f")
		return code == 0
	})

	reader := createApp(t, b, project, spec.App{
		Name: "reader", Command: sh("sleep 60"), ReadOnly: true,
		Volumes: []spec.VolumeMount{{Source: "data", Target: "/data", ReadOnly: true}},
	}, withVols)
	if err := b.Start(ctx, reader.ID); err != nil {
		t.Fatal(err)
	}
	if code, out := execOut(t, b, reader.ID, "cat", "/data/f"); code != 0 || trimmed(out) != "kept" {
		t.Fatalf("volume content: %d %q", code, out)
	}
	if code, _ := execOut(t, b, reader.ID, "sh", "-c", "echo x > /data/g"); code == 0 {
		t.Fatal("read-only volume is writable")
	}
	if code, _ := execOut(t, b, reader.ID, "sh", "-c", "echo x > /rootfs-file"); code == 0 {
		t.Fatal("read-only rootfs is writable")
	}
	if err := b.RemoveVolume(ctx, volName, false); !errdefs.IsConflict(err) {
		t.Fatalf("removing a volume in use: %v (want Conflict)", err)
	}
}
