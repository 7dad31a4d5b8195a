package e2e

import (
	"testing"
)

// jobCompose: job runs jobCmd to completion (after waits for it: on
// kubernetes a Job, whose pod is not restarted), beside db, which says
// db-ready and sleeps.
func jobCompose(jobCmd string) string {
	return `services:
  job:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "` + jobCmd + `"]
  after:
    image: cornus-test/busybox:1
    depends_on: {job: {condition: service_completed_successfully}}
    command: ["true"]
  db:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo db-ready; trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
`
}

// TestComposeWait: `compose wait` (issue 26) blocks until a container of
// the services exits and exits with its code; --down-project then
// removes the project. Locally and through a server.
func TestComposeWait(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, jobCompose("sleep 2; exit 4"), env...)
		p.must("compose", "up", "-d", "job", "db")
		if _, errOut, code := p.run("compose", "wait", "job"); code != 4 {
			t.Fatalf("wait job: exit %d, want the job's 4\n%s", code, errOut)
		}
		p.must("compose", "up", "-d", "--force-recreate", "job")
		if _, errOut, code := p.run("compose", "wait", "--down-project", "job"); code != 4 {
			t.Fatalf("wait --down-project job: exit %d, want 4\n%s", code, errOut)
		}
		if cs, ns, _ := leftovers(t, b, p.name); cs+ns != 0 {
			t.Fatalf("after wait --down-project: %d containers and %d networks left", cs, ns)
		}
	})
}
