package compose

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/format"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/mattn/go-shellwords"
)

// RunOverrides are compose run's changes to the service it runs, as
// docker compose applies them to the loaded project.
type RunOverrides struct {
	Service      string
	Command      []string // nil: the service's
	Entrypoint   *string  // --entrypoint, shell words
	Env          []string // -e KEY=VALUE, or KEY (from Environ)
	Labels       []string // -l KEY=VALUE
	Volumes      []string // -v, Compose short syntax
	Publish      []string // -p, Compose short syntax
	ServicePorts bool     // keep the service's ports (else none)
	WorkingDir   string
	User         string
	TTY          bool // allocate a TTY
	Interactive  bool // keep stdin open
	Environ      []string
}

// Apply changes p's service as compose run does: its ports dropped
// unless kept, restart off, and the overrides set.
func (o RunOverrides) Apply(p *types.Project) error {
	s, ok := p.Services[o.Service]
	if !ok {
		if _, disabled := p.DisabledServices[o.Service]; disabled {
			return fmt.Errorf("service %q is disabled by its profiles: enable one with --profile", o.Service)
		}
		return fmt.Errorf("no such service: %s", o.Service)
	}
	if o.Command != nil {
		s.Command = o.Command
	}
	if o.Entrypoint != nil {
		words, err := shellwords.Parse(*o.Entrypoint)
		if err != nil {
			return fmt.Errorf("--entrypoint %q: %w", *o.Entrypoint, err)
		}
		s.Entrypoint = words
		if o.Command == nil {
			s.Command = nil // as docker run: a new entrypoint drops the image's command
		}
	}
	if err := o.applyEnv(&s); err != nil {
		return err
	}
	for _, l := range o.Labels {
		k, v, _ := strings.Cut(l, "=")
		if s.Labels == nil {
			s.Labels = types.Labels{}
		}
		s.Labels[k] = v
	}
	for _, v := range o.Volumes {
		vol, err := format.ParseVolume(v)
		if err != nil {
			return fmt.Errorf("-v %s: %w", v, err)
		}
		if vol.Type == types.VolumeTypeBind && !filepath.IsAbs(vol.Source) && !strings.HasPrefix(vol.Source, "~") {
			vol.Source = filepath.Join(p.WorkingDir, vol.Source)
		}
		s.Volumes = append(s.Volumes, vol)
	}
	if !o.ServicePorts {
		s.Ports = nil
	}
	for _, v := range o.Publish {
		ports, err := types.ParsePortConfig(v)
		if err != nil {
			return fmt.Errorf("-p %s: %w", v, err)
		}
		s.Ports = append(s.Ports, ports...)
	}
	if o.WorkingDir != "" {
		s.WorkingDir = o.WorkingDir
	}
	if o.User != "" {
		s.User = o.User
	}
	s.Tty, s.StdinOpen = o.TTY, o.Interactive
	s.Restart = types.RestartPolicyNo
	if s.Deploy != nil {
		d := *s.Deploy
		d.RestartPolicy, d.Replicas = nil, nil
		s.Deploy = &d
	}
	p.Services[o.Service] = s
	return nil
}

func (o RunOverrides) applyEnv(s *types.ServiceConfig) error {
	for _, e := range o.Env {
		k, v, set := strings.Cut(e, "=")
		if k == "" {
			return fmt.Errorf("-e %q: want KEY=VALUE or KEY", e)
		}
		if !set {
			var found bool
			for _, kv := range o.Environ {
				if name, val, _ := strings.Cut(kv, "="); name == k {
					v, found = val, true
				}
			}
			if !found {
				continue // as docker: a KEY unset here is not passed
			}
		}
		if s.Environment == nil {
			s.Environment = types.MappingWithEquals{}
		}
		s.Environment[k] = &v
	}
	return nil
}
