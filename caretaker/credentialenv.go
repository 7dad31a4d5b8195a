package caretaker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// credentialWrapper is $0 of the shell that sets a's env credentials.
const credentialWrapper = "cornus-credentials"

// envWrapper is the entrypoint and command that start the app through a
// shell setting each of a's env credentials (deliver env) from its file,
// then exec the app's own entrypoint and command; nil without any. The
// value is read in the app as it starts: never in the container's record
// (the runtime's disk), and a restart reads the file as refreshed. It
// needs /bin/sh and cat in the image.
func (c *Companions) envWrapper(ctx context.Context, a spec.App) (entrypoint, command []string, err error) {
	var env []spec.Credential
	first := -1
	for i, cr := range a.Credentials {
		if cr.Deliver == spec.DeliverEnv {
			env = append(env, cr)
			if first < 0 {
				first = i
			}
		}
	}
	if len(env) == 0 {
		return nil, nil, nil
	}
	if err := spec.ValidateCredentials("services."+a.Name+".credentials", a.Credentials); err != nil {
		return nil, nil, err
	}
	argv, err := c.appArgv(ctx, a)
	if err != nil {
		return nil, nil, fmt.Errorf("services.%s.credentials[%d]: deliver env starts the app through a wrapper that needs its command: %w", a.Name, first, err)
	}
	return []string{"/bin/sh", "-c", envScript(env), credentialWrapper}, argv, nil
}

// envScript sets each credential's variable from its file, failing the
// start where one is missing, and execs its arguments. Names and
// variables are validated: nothing in them needs quoting but the path's.
func envScript(cs []spec.Credential) string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "%s=$(cat '%s/%s')\nexport %s\n", c.Variable, spec.CredentialDir, c.Name, c.Variable)
	}
	b.WriteString(`exec "$@"`)
	return b.String()
}

// appArgv is what the app runs: its entrypoint and command, each the
// image's where the service sets none (as Docker does: an entrypoint
// set drops the image's command).
func (c *Companions) appArgv(ctx context.Context, a spec.App) ([]string, error) {
	if a.Entrypoint != nil {
		return append(slices.Clone(a.Entrypoint), a.Command...), nil
	}
	imgs, err := backends.Want[backends.Images](c.Backend, backends.FeatureImages, "images")
	if err != nil {
		return nil, fmt.Errorf("the %s backend cannot read image %s's entrypoint (its nodes hold the images): set the service's entrypoint (and command): %w",
			c.Backend.Name(), a.Image, errdefs.ErrFailedPrecondition)
	}
	img, err := imgs.InspectImage(ctx, a.Image)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", a.Image, err)
	}
	cmd := a.Command
	if cmd == nil {
		cmd = img.Cmd
	}
	argv := append(slices.Clone(img.Entrypoint), cmd...)
	if len(argv) == 0 {
		return nil, fmt.Errorf("neither the service nor image %s names a command: %w", a.Image, errdefs.ErrInvalidArgument)
	}
	return argv, nil
}
