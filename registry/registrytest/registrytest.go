// Package registrytest helps tests drive a registry over HTTP: a client
// that logs in with a token and pushes a small image, and an Auth that
// lets one token do anything.
package registrytest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/registry"
)

// Client speaks /v2/ to a registry at Base as one token (the password
// of Basic, as docker login sends it); no token: anonymous.
type Client struct {
	T     testing.TB
	Base  string
	Token string
}

// Do sends a request with hdr's name/value pairs as headers and returns
// the status, headers and body.
func (c Client) Do(method, path string, body []byte, hdr ...string) (int, http.Header, string) {
	c.T.Helper()
	req, err := http.NewRequest(method, c.Base+path, bytes.NewReader(body))
	if err != nil {
		c.T.Fatal(err)
	}
	if c.Token != "" {
		req.SetBasicAuth("anyone", c.Token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

// UniqueRepo is prefix and a random suffix: a repository of one test.
func UniqueRepo(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Layer is an uncompressed layer (a tar) of files, name → content.
func Layer(files map[string]string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(files[name]))})
		_, _ = tw.Write([]byte(files[name]))
	}
	_ = tw.Close()
	return b.Bytes()
}

// PushImage pushes a one-layer OCI image (layer as its only layer, an
// uncompressed tar's media type: a runtime can run it when layer is a
// tar) to repo:tag, failing the test on any refusal; it returns the
// layer's and the manifest's digests.
func (c Client) PushImage(repo, tag string, layer []byte) (digest.Digest, digest.Digest) {
	c.T.Helper()
	code, body, l, m := c.TryPushImage(repo, tag, layer)
	if code != http.StatusCreated {
		c.T.Fatalf("push manifest %s:%s: %d %s", repo, tag, code, body)
	}
	return l, m
}

// TryPushImage is PushImage returning the manifest push's status and
// body (its blobs must push).
func (c Client) TryPushImage(repo, tag string, layer []byte) (code int, body string, layerDigest, manifestDigest digest.Digest) {
	c.T.Helper()
	config := []byte(`{"architecture":"amd64","os":"linux","config":{"Cmd":["sh"]},"rootfs":{"type":"layers","diff_ids":["` + digest.FromBytes(layer).String() + `"]}}`)
	for _, b := range [][]byte{layer, config} {
		if code, _, body := c.Do("POST", "/v2/"+repo+"/blobs/uploads/?digest="+digest.FromBytes(b).String(), b); code != http.StatusCreated {
			c.T.Fatalf("push blob to %s: %d %s", repo, code, body)
		}
	}
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest.FromBytes(config), "size": len(config)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest.FromBytes(layer), "size": len(layer)}}})
	code, _, body = c.Do("PUT", "/v2/"+repo+"/manifests/"+tag, m, "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	return code, body, digest.FromBytes(layer), digest.FromBytes(m)
}

// TokenAuth is a registry.Auth that lets one token do anything.
type TokenAuth string

var _ registry.Auth = TokenAuth("")

// Authenticate implements registry.Auth.
func (a TokenAuth) Authenticate(s string) (string, bool) { return "t", s == string(a) }

// Authorize implements registry.Auth.
func (TokenAuth) Authorize(context.Context, string, string, registry.Action) error { return nil }

// Visible implements registry.Auth.
func (TokenAuth) Visible(context.Context, string, string) bool { return true }

// DeleteRepo deletes, through the API, every tagged manifest of repo and
// the blobs they list (a test's cleanup: on a backend's own store,
// nothing it pushed stays held).
func (c Client) DeleteRepo(repo string) {
	c.T.Helper()
	code, _, body := c.Do("GET", "/v2/"+repo+"/tags/list", nil)
	if code == http.StatusNotFound {
		return
	}
	var list struct{ Tags []string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil {
		c.T.Errorf("cleanup: tags of %s: %d %s", repo, code, body)
		return
	}
	for _, tag := range list.Tags {
		code, hdr, body := c.Do("GET", "/v2/"+repo+"/manifests/"+tag, nil, "Accept", "application/vnd.oci.image.manifest.v1+json")
		if code != http.StatusOK {
			continue // deleted with an earlier tag
		}
		var m struct {
			Config *struct{ Digest string }
			Layers []struct{ Digest string }
		}
		_ = json.Unmarshal([]byte(body), &m)
		blobs := []string{}
		if m.Config != nil {
			blobs = append(blobs, m.Config.Digest)
		}
		for _, l := range m.Layers {
			blobs = append(blobs, l.Digest)
		}
		if code, _, body := c.Do("DELETE", "/v2/"+repo+"/manifests/"+hdr.Get("Docker-Content-Digest"), nil); code != http.StatusAccepted {
			c.T.Errorf("cleanup: delete %s:%s: %d %s", repo, tag, code, body)
		}
		for _, b := range blobs {
			if code, _, body := c.Do("DELETE", "/v2/"+repo+"/blobs/"+b, nil); code != http.StatusAccepted && code != http.StatusNotFound {
				c.T.Errorf("cleanup: delete blob %s of %s: %d %s", b, repo, code, body)
			}
		}
	}
}
