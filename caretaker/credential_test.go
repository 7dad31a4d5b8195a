package caretaker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// The app reaches its credentials: the AWS endpoint's variables, with the
// token its companion checks; the file credentials' directory, bound from
// the tmpfs the companion mounts in the shared volume, or a sidecar's
// emptyDir in memory. Without remote mode nothing could mint them:
// refused.
func TestCredentialAttachment(t *testing.T) {
	ctx := context.Background()
	a := spec.App{Name: "web", Credentials: []spec.Credential{{Name: "tok"}, {Name: "aws", Deliver: spec.DeliverAWS}}}
	att, _, err := companions(false, true).Attach(ctx, spec.Project{Name: "p"}, a, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(att.Companion.Env[EnvConfig])
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Credentials) != 2 || c.Credentials[0] != (spec.Credential{Name: "tok"}) || c.Credentials[1] != (spec.Credential{Name: "aws", Deliver: spec.DeliverAWS}) {
		t.Errorf("the companion's credentials: %+v", c.Credentials)
	}
	if len(c.CredentialToken) < 32 || att.AppEnv[EnvAWSAuthorizationTok] != c.CredentialToken {
		t.Errorf("the app's token %q, the companion's %q", att.AppEnv[EnvAWSAuthorizationTok], c.CredentialToken)
	}
	if got := att.AppEnv[EnvAWSCredentialsURI]; got != "http://127.0.0.1:15002/v1/credentials/aws" {
		t.Errorf("%s=%s", EnvAWSCredentialsURI, got)
	}
	var bound bool
	for _, m := range att.AppMounts {
		if m.Target == spec.CredentialDir {
			bound = m.Source == "/var/lib/fake/cornus-caretaker-web-1/credentials" && m.ReadOnly && m.Propagation == "rslave"
		}
	}
	if !bound {
		t.Errorf("the app's mounts: %+v", att.AppMounts)
	}
	again, _, _ := companions(false, true).Attach(ctx, spec.Project{Name: "p"}, a, 2)
	if again.AppEnv[EnvAWSAuthorizationTok] == c.CredentialToken {
		t.Error("two replicas share an endpoint token")
	}
	if _, _, err := companions(false, false).Attach(ctx, spec.Project{Name: "p"}, a, 1); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "services.web.credentials") {
		t.Errorf("without remote mode: %v", err)
	}
	if !c.MountCredentials {
		t.Error("the companion does not mount the credentials' tmpfs in the shared volume")
	}
	side, _, err := companions(true, true).Attach(ctx, spec.Project{Name: "p"}, a, 1)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := Parse(side.Companion.Env[EnvConfig])
	var inMemory bool
	for _, d := range side.Shared {
		if d.Target == spec.CredentialDir {
			inMemory = d.Memory && d.ReadOnly && d.SidecarTarget == "/cornus-shared/credentials"
		}
	}
	if !inMemory || sc.MountCredentials || len(side.Companion.CapAdd) != 0 {
		t.Errorf("a sidecar's file credentials: shared %+v, mounts its own tmpfs %v, capAdd %v", side.Shared, sc.MountCredentials, side.Companion.CapAdd)
	}
	aws := spec.App{Name: "web", Credentials: []spec.Credential{{Name: "aws", Deliver: spec.DeliverAWS}}}
	if att, _, err := companions(true, true).Attach(ctx, spec.Project{Name: "p"}, aws, 1); err != nil || att.AppEnv[EnvAWSCredentialsURI] == "" {
		t.Errorf("an aws credential in a sidecar: %v", err)
	}
}

// A credential is minted again a fifth of its lifetime before it expires
// (at most five minutes before), not within a second (no busy loop on a
// source whose credentials expire at once); one without an expiry every
// five minutes.
func TestRefreshAt(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		exp, want time.Time
	}{
		{now.Add(10 * time.Second), now.Add(8 * time.Second)},
		{now.Add(time.Hour), now.Add(55 * time.Minute)},
		{now.Add(-time.Second), now.Add(time.Second)},
		{now.Add(500 * time.Millisecond), now.Add(time.Second)},
		{time.Time{}, now.Add(5 * time.Minute)},
	} {
		if got := refreshAt(now, c.exp); !got.Equal(c.want) {
			t.Errorf("expiring %v: refresh at %v, want %v", c.exp, got, c.want)
		}
	}
}

// The endpoint answers in the container-credentials shape what
// credential_process printed; anything else is refused, not passed on.
func TestAWSContainerCredentials(t *testing.T) {
	got, err := awsContainerCredentials([]byte(`{"Version":1,"AccessKeyId":"AKIA1","SecretAccessKey":"sk","SessionToken":"st","Expiration":"2030-01-01T00:00:00Z"}`))
	if err != nil || string(got) != `{"AccessKeyId":"AKIA1","SecretAccessKey":"sk","Token":"st","Expiration":"2030-01-01T00:00:00Z"}` {
		t.Errorf("%s, %v", got, err)
	}
	for _, bad := range []string{"plain-token", `{"AccessKeyId":"A"}`, `{"token":"t"}`} {
		if got, err := awsContainerCredentials([]byte(bad)); err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %s, %v", bad, got, err)
		}
	}
}

// A companion's config names credentials that can name a file.
func TestParseCredentials(t *testing.T) {
	for _, raw := range []string{
		`{"project":"p","service":"s","server":"http://x","credentials":[{"name":"../etc"}]}`,
		`{"project":"p","service":"s","server":"http://x","credentials":[{"name":"ok","deliver":"smoke"}]}`,
		`{"project":"p","service":"s","credentials":[{"name":"ok"}]}`,
	} {
		if _, err := Parse(raw); err == nil {
			t.Errorf("%s: taken", raw)
		}
	}
}

// A credential is written only on a tmpfs: a directory a backend should
// have put in memory and did not is refused.
func TestCredentialsInMemory(t *testing.T) {
	if err := inMemory("/dev/shm"); err != nil {
		t.Skipf("no tmpfs at /dev/shm here: %v", err)
	}
	if err := inMemory("/proc"); err == nil || !strings.Contains(err.Error(), "not in memory") {
		t.Errorf("procfs taken as memory: %v", err)
	}
}
