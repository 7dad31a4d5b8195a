package e2e

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends"
)

// Issue 30, item 1: the credential role. The client mints each credential
// from a source on its side (a command printing an expiry, an environment
// variable); the caretaker delivers it as a file on a tmpfs, rewritten
// before it expires, or on the AWS container-credentials endpoint, which
// answers only with the app's token. The credential crosses the server
// and stays on neither its disk nor its log. On kubernetes the caretaker
// is the pod's sidecar, the tmpfs an emptyDir in memory; on incus an
// instance beside the app, the tmpfs the volume they share, the endpoint
// a socket there that the app's loopback port is passed to.
func TestRemoteModeCredentials(t *testing.T) {
	srv := startRemoteServer(t)
	b := daemon(t)
	raw := make([]byte, 12)
	_, _ = rand.Read(raw)
	secret := hex.EncodeToString(raw)
	dir := t.TempDir()
	// The token command counts its runs: a new value each time, valid 4 s.
	mint := filepath.Join(dir, "mint.sh")
	writeFile(t, mint, `#!/bin/sh
n=$(( $(cat `+dir+`/count 2>/dev/null || echo 0) + 1 )); echo $n > `+dir+`/count
exp=$(date -u -d "@$(( $(date +%s) + 4 ))" +%Y-%m-%dT%H:%M:%SZ)
printf '{"token":"tok-%s-%s","expiration":"%s"}\n' "`+secret+`" "$n" "$exp"
`)
	aws := filepath.Join(dir, "aws.sh")
	writeFile(t, aws, `#!/bin/sh
exp=$(date -u -d "@$(( $(date +%s) + 3600 ))" +%Y-%m-%dT%H:%M:%SZ)
printf '{"Version":1,"AccessKeyId":"AKIA%s","SecretAccessKey":"sk-%s","SessionToken":"st-%s","Expiration":"%s"}\n' "`+secret[:8]+`" "`+secret+`" "`+secret+`" "$exp"
`)
	for _, f := range []string{mint, aws} {
		if err := os.Chmod(f, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// An env credential wraps the app's command; a backend without an
	// image store cannot read the image's, so the service names it.
	run := "command"
	if !b.Capabilities().Has(backends.FeatureImages) {
		run = "entrypoint"
	}
	p := newProject(t, `
services:
  app:
    image: `+image+`
    init: true
    user: "1000"
    `+run+`: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
    x-cornus-credentials:
      - name: api-token
        source: {command: [`+mint+`]}
      - name: from-env
        source: {env: CRED_E2E}
      - name: db-password
        deliver: env
        variable: CRED_DB
        source: {env: CRED_E2E_DB}
      - name: aws
        deliver: aws
        source: {command: [`+aws+`]}
`, append(srv.env(), "CRED_E2E=env-"+secret, "CRED_E2E_DB=db-"+secret)...)
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	read := func(name string) string {
		out, _, _ := p.run("compose", "exec", "-T", "app", "cat", "/run/cornus-credentials/"+name)
		return out
	}
	if got := read("api-token"); !strings.Contains(got, `"tok-`+secret+`-1"`) {
		t.Errorf("the token file: %q", got)
	}
	if got := read("from-env"); got != "env-"+secret {
		t.Errorf("the file of the client's variable: %q", got)
	}
	if m := p.must("compose", "exec", "-T", "app", "grep", " /run/cornus-credentials ", "/proc/mounts"); !strings.Contains(m, " tmpfs ") {
		t.Errorf("the credentials are not on a tmpfs: %q", m)
	}
	if out, _, code := p.run("compose", "exec", "-T", "app", "sh", "-c", "echo x > /run/cornus-credentials/api-token"); code == 0 {
		t.Errorf("the app rewrote its credential: %q", out)
	}
	checkEnvCredential(t, p, b, "CRED_DB=db-"+secret)
	start := time.Now()
	waitFor(t, 20*time.Second, "the token rewritten before it expires", func() bool {
		return strings.Contains(read("api-token"), `"tok-`+secret+`-2"`)
	})
	t.Logf("the 4 s token rewritten after %v", time.Since(start).Round(10*time.Millisecond))

	checkAWSEndpoint(t, p, secret)

	// Nowhere on the server's disk: its tokens and state directory, its
	// data directory's own part (where it keeps what it knows of
	// deployments: the credentials' names), its log.
	files := 0
	for _, dir := range []string{srv.dir, filepath.Join(cmp.Or(os.Getenv("CORNUS_DATA_DIR"), "/var/lib/cornus"), "server")} {
		files += searchFiles(t, dir, secret)
	}
	if files == 0 {
		t.Error("searched none of the server's files")
	}
	if strings.Contains(srv.logs.String(), secret) {
		t.Errorf("the credential is in the server's log:\n%s", srv.logs.String())
	}
	p.must("compose", "--progress", "quiet", "down")
	if m := mountedFor(t, p.name); len(m) != 0 {
		t.Errorf("still mounted after down: %v", m)
	}
	if c, _, v := leftovers(t, b, p.name); c != 0 || v != 0 {
		t.Errorf("%d containers, %d volumes after down", c, v)
	}
}

// searchFiles reports the regular files below dir that hold secret (a
// tmpfs mounted below, the companion's propagated there, is memory, not
// disk) and returns how many it read.
func searchFiles(t *testing.T, dir, secret string) int {
	t.Helper()
	var root syscall.Stat_t
	if err := syscall.Stat(dir, &root); err != nil {
		t.Fatal(err)
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() { // no FIFOs: a read would block
			return nil
		}
		var st syscall.Stat_t
		var fst syscall.Statfs_t
		if syscall.Stat(path, &st) == nil && st.Dev != root.Dev && syscall.Statfs(path, &fst) == nil && fst.Type == unix.TMPFS_MAGIC {
			return nil
		}
		files++
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), secret) {
			t.Errorf("the credential is in the server's file %s", path)
		}
		return nil
	})
	if err != nil {
		t.Errorf("search %s: %v", dir, err)
	}
	return files
}

// checkAWSEndpoint reads the AWS credential from the app through its
// endpoint, with its token and, refused, with a wrong one.
func checkAWSEndpoint(t *testing.T, p *project, secret string) {
	t.Helper()
	get := `wget -q -O- --header "Authorization: $AWS_CONTAINER_AUTHORIZATION_TOKEN" "$AWS_CONTAINER_CREDENTIALS_FULL_URI"`
	if got := p.must("compose", "exec", "-T", "app", "sh", "-c", get); !strings.Contains(got, `"AccessKeyId":"AKIA`+secret[:8]+`"`) ||
		!strings.Contains(got, `"Token":"st-`+secret+`"`) || !strings.Contains(got, `"SecretAccessKey":"sk-`+secret+`"`) {
		t.Errorf("the AWS endpoint: %q", got)
	}
	if out, _, code := p.run("compose", "exec", "-T", "app", "sh", "-c", `wget -q -O- --header "Authorization: wrong" "$AWS_CONTAINER_CREDENTIALS_FULL_URI"`); code == 0 {
		t.Errorf("the AWS endpoint answered a wrong token: %q", out)
	}
}

// checkEnvCredential finds want (VARIABLE=value) in the environment of
// the app's processes (an exec's own has only the container's record),
// and the value nowhere in that record: read from the tmpfs as the app
// started, not kept by the runtime.
func checkEnvCredential(t *testing.T, p *project, b backends.Backend, want string) {
	t.Helper()
	const find = `for e in /proc/[0-9]*/environ; do tr '\0' '\n' < "$e" 2>/dev/null; done | grep -x "$1" | head -n 1`
	if out, errOut, code := p.run("compose", "exec", "-T", "app", "sh", "-c", find, "find", want); code != 0 || out != want+"\n" {
		t.Errorf("the app's process environment has no %s: exit %d, %q %s", want, code, out, errOut)
	}
	if out, _, _ := p.run("compose", "exec", "-T", "app", "sh", "-c", `echo "${CRED_DB:-unset}"`); out != "unset\n" {
		t.Errorf("an exec's environment (the container's record) holds the credential: %q", out)
	}
	cs, err := b.List(context.Background(), backends.ListOptions{Labels: map[string]string{backends.ComposeProject: p.name, backends.ComposeService: "app"}})
	if err != nil || len(cs) != 1 {
		t.Fatalf("the app's container: %d, %v", len(cs), err)
	}
	d, err := b.Inspect(context.Background(), cs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	_, value, _ := strings.Cut(want, "=")
	argv := slices.Concat(d.Config.Entrypoint, d.Config.Cmd) // incus reports the whole as Cmd
	record := strings.Join(append(argv, d.Config.Env...), "\n")
	if strings.Contains(record, value) || len(argv) == 0 || argv[0] != "/bin/sh" {
		t.Errorf("the container's record: command %q, the value in it %v", argv, strings.Contains(record, value))
	}
}
