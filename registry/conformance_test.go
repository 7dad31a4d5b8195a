package registry_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// conformanceBin is the OCI conformance test, built by
// scripts/conformance.sh (setup builds it; outside CI a missing Go module
// proxy skips).
func conformanceBin(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../scripts/conformance.sh").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("scripts/conformance.sh: %v", err)
		}
		t.Skipf("the conformance test could not be built (scripts/conformance.sh: %v)", err)
	}
	return strings.TrimSpace(string(out))
}

// TestConformance runs the OCI distribution-spec conformance test (every
// workflow: pull, push, content discovery, content management, with its
// default data: images, indexes, artifacts, subjects, sha512) against
// the registry over FSStore, logging in with a token.
func TestConformance(t *testing.T) {
	bin := conformanceBin(t)
	dir := t.TempDir()
	store, err := registry.NewFSStore(dir + "/store")
	if err != nil {
		t.Fatal(err)
	}
	h, err := registry.New(registry.Config{Store: store, Auth: registrytest.TokenAuth("s3cret"), UploadDir: dir + "/uploads"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	results := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = results
	cmd.Env = append(os.Environ(),
		"OCI_REGISTRY="+strings.TrimPrefix(srv.URL, "http://"), "OCI_TLS=disabled",
		"OCI_REPO1=conformance/repo1", "OCI_REPO2=conformance/repo2",
		"OCI_API_BLOBS_UPLOAD_CANCEL=true", "OCI_API_MANIFESTS_TAG_PARAM=true",
		"OCI_USERNAME=anyone", "OCI_PASSWORD=s3cret", "OCI_RESULTS_DIR="+results)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	if !strings.Contains(string(out), "OCI Conformance Result: Pass") {
		t.Fatalf("conformance did not pass:\n%s", out)
	}
}
