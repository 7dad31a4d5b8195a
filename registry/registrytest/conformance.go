package registrytest

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/registry"
)

// Conformance runs the OCI distribution-spec conformance test (every
// workflow: pull, push, content discovery, content management, with its
// default data: images, indexes, artifacts, subjects, sha512) against a
// registry over store, logging in with a token; repos prefixes its two
// repositories; env (NAME=VALUE) adds to the test's settings. The test
// binary is built by scripts/conformance.sh
// (setup builds it; outside CI a missing Go module proxy skips).
func Conformance(t *testing.T, store registry.Store, repos string, env ...string) {
	t.Helper()
	bin := conformanceBin(t)
	h, err := registry.New(registry.Config{Store: store, Auth: TokenAuth("s3cret"), UploadDir: t.TempDir()})
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
		"OCI_REPO1="+repos+"/repo1", "OCI_REPO2="+repos+"/repo2",
		"OCI_API_BLOBS_UPLOAD_CANCEL=true", "OCI_API_MANIFESTS_TAG_PARAM=true",
		"OCI_USERNAME=anyone", "OCI_PASSWORD=s3cret", "OCI_RESULTS_DIR="+results)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	if !strings.Contains(string(out), "OCI Conformance Result: Pass") {
		t.Fatalf("conformance did not pass:\n%s", out)
	}
}

func conformanceBin(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "conformance.sh")
	out, err := exec.Command(script).Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("scripts/conformance.sh: %v", err)
		}
		t.Skipf("the conformance test could not be built (scripts/conformance.sh: %v)", err)
	}
	return strings.TrimSpace(string(out))
}
