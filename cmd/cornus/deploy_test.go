package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// `cornus deploy --server URL --detach` with an egress policy that may
// route to the client is refused before anything reaches the server: a
// detached deployment outlives the client that would carry those
// connections. The same command without the client route does reach the
// server, so the refusal is what kept it away.
func TestDeployDetachRefusesClientRoutes(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, `{"message":"test server: not serving"}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "deploy.yaml"), []byte("name: web\nimage: cornus-test/busybox:1\ncommand: [sleep, '60']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"CORNUS_TOKEN=cornus_" + strings.Repeat("A", 43), "HOME=" + t.TempDir()}
	deploy := func(egress ...string) (string, int) {
		args := append([]string{"deploy", "--progress", "quiet", "--server", srv.URL, "--detach", "-f", "deploy.yaml"}, egress...)
		_, errOut, code := runCLI(t, dir, env, args...)
		return errOut, code
	}
	for _, egress := range [][]string{
		{"--egress", "proxy", "--egress-route", "*.corp.example=client"},
		{"--egress", "transparent", "--egress-default", "client"},
	} {
		errOut, code := deploy(egress...)
		if code == 0 || !strings.Contains(errOut, "--detach: services web may route egress to the client") {
			t.Errorf("deploy --detach %v: exit %d, stderr %q; want the refusal", egress, code, errOut)
		}
		if n := requests.Load(); n != 0 {
			t.Fatalf("deploy --detach %v sent %d requests to the server before refusing", egress, n)
		}
	}
	if errOut, code := deploy("--egress", "proxy", "--egress-route", "*.corp.example=deny"); code == 0 || requests.Load() == 0 {
		t.Fatalf("control (no client route): exit %d, %d requests, stderr %q; want it to reach the test server", code, requests.Load(), errOut)
	}
}

// Credentials without a server are refused before anything is made: a
// caretaker companion of a server's remote mode delivers them.
func TestDeployLocalRefusesCredentials(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "deploy.yaml"), []byte("name: web\nimage: cornus-test/busybox:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "CORNUS_SERVER="}
	_, errOut, code := runCLI(t, dir, env, "deploy", "--progress", "quiet", "-f", "deploy.yaml", "--credential", "tok=env:TOK")
	if code == 0 || !strings.Contains(errOut, "services web ask for credentials") || !strings.Contains(errOut, "--server") {
		t.Errorf("deploy --credential without a server: exit %d, stderr %q", code, errOut)
	}
}
