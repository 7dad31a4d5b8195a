package registry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/internal/dockerarchive"
)

func tarOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func spool(t *testing.T, data []byte) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "archive.tar"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	return f
}

func readBlob(t *testing.T, s Store, repo string, d digest.Digest) []byte {
	t.Helper()
	r, err := s.OpenBlob(context.Background(), repo, d)
	if err != nil {
		t.Fatalf("blob %s in %s: %v", d, repo, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A docker-archive becomes what a push of the image makes: a tagged OCI
// manifest whose config is the archive's config, byte for byte (so the
// image ID a runtime computes is the one docker save wrote), and whose
// layer is the archive's layer.
func TestImportDockerArchive(t *testing.T) {
	ctx := context.Background()
	store, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	layer := tarOf(t, map[string][]byte{"hello": []byte("hi\n")})
	img := dockerarchive.Image{Ref: "tenant/app:1", Cmd: []string{"cat", "/hello"}}
	var arc bytes.Buffer
	if err := dockerarchive.Write(&arc, img, layer); err != nil {
		t.Fatal(err)
	}
	got, err := Import(ctx, store, spool(t, arc.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Repo != "tenant/app" || got[0].Tag != "1" {
		t.Fatalf("imported %+v", got)
	}
	m, err := store.Manifest(ctx, "tenant/app", "1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Digest != got[0].Digest || digest.FromBytes(m.Data) != m.Digest {
		t.Fatalf("manifest %s, imported %s", m.Digest, got[0].Digest)
	}
	var mf struct {
		Config struct{ Digest digest.Digest }
		Layers []struct {
			MediaType string
			Digest    digest.Digest
			Size      int64
		}
	}
	if err := json.Unmarshal(m.Data, &mf); err != nil {
		t.Fatal(err)
	}
	id, err := dockerarchive.ImageID(img, layer)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Config.Digest.String() != id {
		t.Fatalf("config %s, the archive's image ID %s", mf.Config.Digest, id)
	}
	if len(mf.Layers) != 1 || mf.Layers[0].MediaType != "application/vnd.docker.image.rootfs.diff.tar" || mf.Layers[0].Size != int64(len(layer)) {
		t.Fatalf("layers %+v", mf.Layers)
	}
	// The very bytes containerd's importer makes of the archive (a node
	// that imported it has this manifest digest).
	want := `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",` +
		`"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"` + id + `","size":` + strconv.Itoa(len(readBlob(t, store, "tenant/app", mf.Config.Digest))) + `},` +
		`"layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar","digest":"` + mf.Layers[0].Digest.String() + `","size":` + strconv.Itoa(len(layer)) + `}]}`
	if string(m.Data) != want {
		t.Fatalf("manifest\n%s\nwant containerd's\n%s", m.Data, want)
	}
	if !bytes.Equal(readBlob(t, store, "tenant/app", mf.Layers[0].Digest), layer) {
		t.Fatal("the stored layer is not the archive's")
	}

	// Loaded again under a second repository: linked, not stored twice.
	img.Ref = "tenant/other:2"
	arc.Reset()
	if err := dockerarchive.Write(&arc, img, layer); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, store, spool(t, arc.Bytes())); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readBlob(t, store, "tenant/other", mf.Layers[0].Digest), layer) {
		t.Fatal("the second repository cannot read the layer")
	}
}

// An OCI layout (an index of two platforms' manifests, its layers
// gzipped) is copied byte for byte: the index under the name, the
// platform manifests below it.
func TestImportOCILayout(t *testing.T) {
	ctx := context.Background()
	store, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`)}
	blob := func(data []byte) map[string]any {
		d := digest.FromBytes(data)
		files["blobs/sha256/"+d.Encoded()] = data
		return map[string]any{"digest": d, "size": len(data)}
	}
	js := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var platforms []any
	var layers []digest.Digest
	for _, arch := range []string{"amd64", "arm64"} {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(tarOf(t, map[string][]byte{"arch": []byte(arch)}))
		_ = zw.Close()
		l := blob(gz.Bytes())
		l["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip"
		layers = append(layers, l["digest"].(digest.Digest))
		c := blob(js(map[string]any{"architecture": arch, "os": "linux", "rootfs": map[string]any{"type": "layers"}}))
		c["mediaType"] = "application/vnd.oci.image.config.v1+json"
		m := blob(js(map[string]any{"schemaVersion": 2, "mediaType": mediaOCIManifest, "config": c, "layers": []any{l}}))
		m["mediaType"] = mediaOCIManifest
		m["platform"] = map[string]string{"architecture": arch, "os": "linux"}
		platforms = append(platforms, m)
	}
	index := blob(js(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": platforms}))
	index["mediaType"] = "application/vnd.oci.image.index.v1+json"
	index["annotations"] = map[string]string{"io.containerd.image.name": "docker.io/library/multi:3", "org.opencontainers.image.ref.name": "3"}
	files["index.json"] = js(map[string]any{"schemaVersion": 2, "manifests": []any{index}})

	layout := tarOf(t, files)
	got, err := Import(ctx, store, spool(t, layout))
	if err != nil {
		t.Fatal(err)
	}
	// Stored under another name (a runtime's export names images its own
	// way), the index is the same, byte for byte.
	if as, err := ImportAs(ctx, store, spool(t, layout), "renamed:9"); err != nil || as.Repo != "renamed" || as.Digest != index["digest"] {
		t.Fatalf("ImportAs: %+v %v", as, err)
	}
	if len(got) != 1 || got[0].Repo != "multi" || got[0].Tag != "3" || got[0].Digest != index["digest"] {
		t.Fatalf("imported %+v, want multi:3 at %s", got, index["digest"])
	}
	m, err := store.Manifest(ctx, "multi", "3")
	if err != nil || m.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("multi:3: %v %s", err, m.MediaType)
	}
	for _, p := range platforms {
		d := p.(map[string]any)["digest"].(digest.Digest)
		if _, err := store.Manifest(ctx, "multi", d.String()); err != nil {
			t.Errorf("platform manifest %s: %v", d, err)
		}
	}
	for _, l := range layers {
		if got := readBlob(t, store, "multi", l); digest.FromBytes(got) != l {
			t.Errorf("layer %s stored as %s", l, digest.FromBytes(got))
		}
	}
}

// What an archive names but lacks, or names wrongly, is refused with a
// message naming it, and no tag is set.
func TestImportRefuses(t *testing.T) {
	ctx := context.Background()
	layer := tarOf(t, map[string][]byte{"f": []byte("x")})
	var arc bytes.Buffer
	if err := dockerarchive.Write(&arc, dockerarchive.Image{Ref: "app:1"}, layer); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(arc.Bytes()))
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		if h.Typeflag == tar.TypeReg {
			files[h.Name], _ = io.ReadAll(tr)
		}
	}
	var layerName string
	for name := range files {
		if strings.HasSuffix(name, "layer.tar") {
			layerName = name
		}
	}
	noLayer := map[string][]byte{}
	for k, v := range files {
		if k != layerName {
			noLayer[k] = v
		}
	}
	badName := map[string][]byte{}
	for k, v := range files {
		badName[k] = v
	}
	badName["manifest.json"] = bytes.Replace(files["manifest.json"], []byte("app:1"), []byte("App:1"), 1)
	for what, c := range map[string]struct {
		files map[string][]byte
		want  string
	}{
		"no layer":  {noLayer, "names layer " + layerName},
		"bad name":  {badName, `image name "App:1"`},
		"no images": {map[string][]byte{"README": []byte("hi")}, "neither manifest.json"},
	} {
		store, err := NewFSStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Import(ctx, store, spool(t, tarOf(t, c.files)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", what, err, c.want)
		}
		if repos, _ := store.Repositories(ctx); len(repos) > 0 {
			if tags, _ := store.Tags(ctx, repos[0]); len(tags) > 0 {
				t.Errorf("%s: tagged %v anyway", what, tags)
			}
		}
	}
}
