package clientdeploy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// parseCredential reads one --credential value,
// [SERVICE/]NAME[@aws|@env:VARIABLE]=KIND:VALUE, KIND one of env (a variable), file (a
// path, relative to dir), cmd (a command and its arguments, split at
// spaces: no shell) or helper (HELPER:REGISTRY, a docker credential
// helper's login). service is "" for every service.
func parseCredential(v, dir string) (service string, c spec.Credential, err error) {
	bad := func(why string) error {
		return fmt.Errorf("--credential %q: %s: want [SERVICE/]NAME[@aws|@env:VARIABLE]=KIND:VALUE, KIND env, file, cmd or helper (e.g. api-token=cmd:./mint-token, aws@aws=cmd:aws configure export-credentials --format process, db@env:DB_PASSWORD=cmd:./mint db)", v, why)
	}
	lhs, src, ok := strings.Cut(v, "=")
	if !ok {
		return "", c, bad("no '='")
	}
	if s, n, ok := strings.Cut(lhs, "/"); ok {
		if s == "" {
			return "", c, bad("an empty SERVICE/ (every service: no SERVICE/ at all)")
		}
		service, lhs = s, n
	}
	if name, deliver, ok := strings.Cut(lhs, "@"); ok {
		c.Name, c.Deliver = name, deliver
		if v, ok := strings.CutPrefix(deliver, spec.DeliverEnv+":"); ok {
			c.Deliver, c.Variable = spec.DeliverEnv, v
		}
	} else {
		c.Name = lhs
	}
	kind, val, ok := strings.Cut(src, ":")
	if !ok || val == "" {
		return "", c, bad("no KIND:VALUE")
	}
	var s spec.CredentialSource
	switch kind {
	case "env":
		s.Env = val
	case "file":
		s.File = val
	case "cmd":
		s.Command = strings.Fields(val)
	case "helper":
		if s.Helper, s.Registry, ok = strings.Cut(val, ":"); !ok {
			return "", c, bad("helper:HELPER:REGISTRY")
		}
	default:
		return "", c, bad(fmt.Sprintf("unknown KIND %q", kind))
	}
	s = s.InDir(dir)
	c.Source = &s
	if err := spec.ValidateCredentials("--credential", []spec.Credential{c}); err != nil {
		return "", c, bad(err.Error())
	}
	return service, c, nil
}

// applyCredentials adds the --credential values to p's apps (one of the
// same name replaced).
func applyCredentials(p *spec.Project, values []string, dir string) error {
	for _, v := range values {
		service, c, err := parseCredential(v, dir)
		if err != nil {
			return err
		}
		if _, ok := p.Services[service]; service != "" && !ok {
			return fmt.Errorf("--credential %q: no service %s in project %s", v, service, p.Name)
		}
		for name, a := range p.Services {
			if service != "" && name != service {
				continue
			}
			a.Credentials = slices.DeleteFunc(slices.Clone(a.Credentials), func(o spec.Credential) bool { return o.Name == c.Name })
			a.Credentials = append(a.Credentials, c)
			if err := spec.ValidateCredentials("services."+name+".credentials", a.Credentials); err != nil {
				return fmt.Errorf("--credential %q: %w", v, err)
			}
			p.Services[name] = a
		}
	}
	return nil
}
