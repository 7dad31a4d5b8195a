package registry

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// tokenAuth lets one token do anything: the conformance test's login.
type tokenAuth string

func (a tokenAuth) Authenticate(s string) (string, bool) { return "t", s == string(a) }

func (tokenAuth) Authorize(context.Context, string, string, Action) error { return nil }

func (tokenAuth) Visible(context.Context, string, string) bool { return true }

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
	store, err := NewFSStore(dir + "/store")
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Store: store, Auth: tokenAuth("s3cret"), UploadDir: dir + "/uploads"})
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
