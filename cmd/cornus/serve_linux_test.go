package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testnet"
	"github.com/cornus-dev/cornus/server"
)

// Issue 28: a server whose cluster's API server does not answer (yet)
// waits for it, saying so, instead of exiting into a restart loop.
func TestServeWaitsForUnreachableBackend(t *testing.T) {
	dir := t.TempDir()
	port := testnet.FreePort(t) // nothing listens there
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: cornus}}]
current-context: x
`, port)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"CORNUS_DEPLOY_BACKEND=kubernetes", "KUBECONFIG=" + kubeconfig, "HOME=" + dir}
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err := openServer(ctx, env, server.Config{DataDir: filepath.Join(dir, "data"), Environ: env, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("openServer returned %v after %v, want it still retrying at the deadline", err, time.Since(start))
	}
	if n := strings.Count(logs.String(), "the backend is unreachable; retrying"); n < 2 {
		t.Errorf("%d retries said, want at least 2:\n%s", n, logs.String())
	}
	if !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("the error does not name the last failure: %v", err)
	}
}
