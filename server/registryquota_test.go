package server

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// TestRegistryQuota: what one tenant keeps in the registry is bounded,
// each blob counted once at its stored size; the quota is per tenant
// (bob's pushes do not spend alice's); deleting frees it. Where the nodes
// pull, a load into the registry meets the same quota.
func TestRegistryQuota(t *testing.T) {
	ts := newTestServer(t)
	ts.srv.cfg.RegistryQuota = 100 << 10
	alice := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.alice}
	bob := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.bob}
	one, two, bobs := registrytest.UniqueRepo("alice-q1-"), registrytest.UniqueRepo("alice-q2-"), registrytest.UniqueRepo("bob-q-")
	t.Cleanup(func() { alice.DeleteRepo(one); alice.DeleteRepo(two); bob.DeleteRepo(bobs) })
	layer := func(fill string) []byte {
		return registrytest.Layer(map[string]string{"data": strings.Repeat(fill, 60<<10)})
	}

	alice.PushImage(one, "1", layer("a"))
	code, body, _, _ := alice.TryPushImage(two, "1", layer("b"))
	if code != http.StatusForbidden || !strings.Contains(body, "DENIED") || !strings.Contains(body, "registry quota") {
		t.Fatalf("alice's push past her quota: %d %s", code, body)
	}
	alice.PushImage(two, "1", layer("a")) // the same image again keeps nothing more
	bob.PushImage(bobs, "1", layer("b"))  // bob's quota is his own

	alice.DeleteRepo(one)
	alice.DeleteRepo(two)
	if code, body, _, _ := alice.TryPushImage(two, "1", layer("b")); code != http.StatusCreated {
		t.Fatalf("alice's push after she deleted hers: %d %s", code, body)
	}

	// A load into the registry, where the nodes pull.
	nodes := newTestServerOver(t, func(b backends.Backend) backends.Backend { return pullingBackend{b, b.(backends.Images)} })
	nodes.srv.cfg.RegistryHost = strings.TrimPrefix(nodes.http.URL, "http://")
	nodes.srv.cfg.RegistryQuota = 100 << 10 // less than the busybox image
	var arc bytes.Buffer
	repo := registrytest.UniqueRepo("alice-ql-")
	if err := testimage.BuildBusybox(&arc, testimage.Options{Ref: repo + ":1"}); err != nil {
		t.Fatal(err)
	}
	_, err := nodes.clientOf(nodes.alice).LoadImage(context.Background(), bytes.NewReader(arc.Bytes()))
	if !errdefs.IsOutOfRange(err) || !strings.Contains(err.Error(), "registry quota") {
		t.Fatalf("alice's load past her quota: %v", err)
	}
	nalice := registrytest.Client{T: t, Base: nodes.http.URL, Token: nodes.alice}
	if code, _, _ := nalice.Do("GET", "/v2/"+repo+"/manifests/1", nil); code != http.StatusNotFound {
		t.Fatalf("a load refused for the quota is in the registry: %d", code)
	}
}
