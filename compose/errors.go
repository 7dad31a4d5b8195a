package compose

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/cornus-dev/cornus/spec"
)

// loadContext is what an error message can name: the Compose files read
// and where the project name came from.
type loadContext struct {
	files      []string
	nameSource string // "-p", "COMPOSE_PROJECT_NAME" or ""
}

var (
	reFalseSchema     = regexp.MustCompile(`^validating (.+?): (\S+) false schema$`)
	reAdditionalProps = regexp.MustCompile(`^validating (.+?): (\S+) additional properties? '([^']+)' not allowed$`)
	reAdditionalProp  = regexp.MustCompile(`Additional property (\S+) is not allowed`)
	reValidating      = regexp.MustCompile(`^validating (.+?): (.*)$`)
	reDecodeLine      = regexp.MustCompile(`^'([^']*)' (.*)$`)
	reBracketKey      = regexp.MustCompile(`\[([^\]]+)\]`)
	reParseFailed     = regexp.MustCompile(`^failed to parse (.+?): yaml: (.*)$`)
)

// loadError rewrites compose-go's errors so each names the file, the field
// (as written in Compose) and what to do. Unrecognised errors keep their
// text, prefixed with the files when they name none.
func (lc loadContext) loadError(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(err.Error())
	if isRefusal(err) { // keep the class: callers test for it
		return fmt.Errorf("%s%w", strings.TrimSuffix(lc.withFiles(msg), msg), err)
	}
	switch {
	case reFalseSchema.MatchString(msg):
		m := reFalseSchema.FindStringSubmatch(msg)
		return fmt.Errorf("%s: %s: unknown attribute%s; remove it, or prefix it with x- to keep it as an extension", m[1], m[2], suggestAttr(m[2]))
	case reAdditionalProps.MatchString(msg):
		m := reAdditionalProps.FindStringSubmatch(msg)
		return fmt.Errorf("%s: %s.%s: unknown attribute; remove it, or prefix it with x- to keep it as an extension", m[1], m[2], m[3])
	case reAdditionalProp.MatchString(msg):
		return fmt.Errorf("%s (remove it, or prefix it with x- to keep it as an extension)", lc.withFiles(msg))
	case strings.HasPrefix(msg, "decoding failed due to the following error(s):"):
		return lc.decodeError(msg)
	case isPortError(msg):
		if located := lc.diagnosePorts(); located != nil {
			return located
		}
		return errors.New(lc.withFiles(msg + " (ports are [HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTOCOL], numbers 1-65535)"))
	case strings.HasPrefix(msg, "invalid project name"):
		src := "the top-level name:"
		switch lc.nameSource {
		case "-p":
			src = "-p/--project-name"
		case "COMPOSE_PROJECT_NAME":
			src = "COMPOSE_PROJECT_NAME"
		}
		return fmt.Errorf("%s: %s", src, msg)
	case strings.HasPrefix(msg, "yaml: "):
		return errors.New(lc.locateYAMLError(msg))
	case reParseFailed.MatchString(msg):
		m := reParseFailed.FindStringSubmatch(msg)
		return fmt.Errorf("%s: %s", m[1], m[2])
	case strings.Contains(msg, "required variable") && strings.Contains(msg, "is missing a value"):
		return errors.New(lc.withFiles(msg) + " (set it in the environment or an .env file)")
	case strings.HasSuffix(msg, ": invalid compose project"):
		return errors.New(lc.withFiles(consistencyFix(strings.TrimSuffix(msg, ": invalid compose project"))))
	case strings.HasPrefix(msg, "healthcheck.test must start"):
		return errors.New(lc.withFiles(lc.healthcheckService() + msg + ` (for example test: ["CMD", "curl", "-f", "http://localhost"])`))
	case strings.HasPrefix(msg, "dependency cycle detected"):
		return errors.New(lc.withFiles(msg + " (remove one of these depends_on entries)"))
	case strings.HasPrefix(msg, "validating "):
		m := reValidating.FindStringSubmatch(msg)
		return fmt.Errorf("%s: %s", m[1], m[2])
	}
	return errors.New(lc.withFiles(msg))
}

// withFiles prefixes msg with the Compose files unless it names one.
func (lc loadContext) withFiles(msg string) string {
	for _, f := range lc.files {
		if strings.Contains(msg, f) {
			return msg
		}
	}
	if len(lc.files) == 0 {
		return msg
	}
	return strings.Join(lc.files, ", ") + ": " + msg
}

// consistencyFix adds what to do to compose-go's consistency errors.
func consistencyFix(msg string) string {
	fixes := []struct{ needle, fix string }{
		{"refers to undefined network", "declare it under the top-level networks:"},
		{"refers to undefined volume", "declare it under the top-level volumes:"},
		{"refers to undefined secret", "declare it under the top-level secrets:"},
		{"refers to undefined config", "declare it under the top-level configs:"},
		{"depends on undefined service", "define that service, or mark the dependency required: false"},
		{"neither an image nor a build context", "set image: or build:"},
		{"can't set distinct values", "set only one of them"},
		{"as container name must be unique", "drop container_name or run a single replica"},
		{"network_mode and networks cannot be combined", "use one of them"},
	}
	if strings.Contains(msg, "as container name must be unique") {
		// compose-go words this one oddly ("services.deploy.replicas: can't
		// set container_name and web as ..."): say it plainly.
		if m := regexp.MustCompile(`container_name and (\S+) as`).FindStringSubmatch(msg); m != nil {
			return fmt.Sprintf("services.%s: container_name cannot be set with more than one replica (deploy.replicas or scale): drop container_name or run a single replica", m[1])
		}
	}
	for _, f := range fixes {
		if strings.Contains(msg, f.needle) {
			return msg + " (" + f.fix + ")"
		}
	}
	return msg
}

// decodeError turns mapstructure's report into one line per field.
func (lc loadContext) decodeError(msg string) error {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "* "))
		m := reDecodeLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		path := reBracketKey.ReplaceAllString(m[1], ".$1")
		detail := m[2]
		if rest, ok := strings.CutPrefix(detail, "time: "); ok {
			if !strings.HasPrefix(rest, "invalid duration") {
				rest = "invalid duration: " + rest
			}
			detail = rest + " (use a duration such as 10s or 1m30s)"
		}
		lines = append(lines, path+": "+detail)
	}
	if len(lines) == 0 {
		return errors.New(lc.withFiles(msg))
	}
	return errors.New(lc.withFiles(strings.Join(lines, "\n  ")))
}

// diagnosePorts finds the port entry compose-go rejected by re-reading the
// raw files (compose-go's message names neither file nor service).
func (lc loadContext) diagnosePorts() error {
	for _, f := range lc.files {
		raw, err := readCompose(f)
		if err != nil {
			continue
		}
		var doc struct {
			Services map[string]struct {
				Ports []any `yaml:"ports"`
			} `yaml:"services"`
		}
		if yaml.Unmarshal(raw, &doc) != nil {
			continue
		}
		names := make([]string, 0, len(doc.Services))
		for n := range doc.Services {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for i, p := range doc.Services[n].Ports {
				s, isString := p.(string)
				if !isString {
					if _, isInt := p.(int); isInt {
						s = fmt.Sprint(p)
					} else {
						continue
					}
				}
				if strings.Contains(s, "$") {
					continue // interpolated; can't judge the raw text
				}
				if _, err := types.ParsePortConfig(s); err != nil {
					return fmt.Errorf("%s: services.%s.ports[%d]: invalid port %q: %v (use [HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTOCOL], numbers 1-65535)", f, n, i, s, err)
				}
			}
		}
	}
	return nil
}

func isPortError(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"invalid containerport", "invalid hostport", "invalid proto", "invalid ip address", "invalid port"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// healthcheckService names the service whose healthcheck test does not
// start with CMD, CMD-SHELL or NONE, as a "services.NAME." prefix.
func (lc loadContext) healthcheckService() string {
	for _, f := range lc.files {
		raw, err := readCompose(f)
		if err != nil {
			continue
		}
		var doc struct {
			Services map[string]struct {
				Healthcheck struct {
					Test any `yaml:"test"`
				} `yaml:"healthcheck"`
			} `yaml:"services"`
		}
		if yaml.Unmarshal(raw, &doc) != nil {
			continue
		}
		for name, s := range doc.Services {
			if l, ok := s.Healthcheck.Test.([]any); ok && len(l) > 0 {
				switch l[0] {
				case "CMD", "CMD-SHELL", "NONE":
				default:
					return "services." + name + "."
				}
			}
		}
	}
	return ""
}

// locateYAMLError names the file whose YAML does not parse.
func (lc loadContext) locateYAMLError(msg string) string {
	for _, f := range lc.files {
		raw, err := readCompose(f)
		if err != nil {
			continue
		}
		var v any
		if err := yaml.Unmarshal(raw, &v); err != nil {
			return f + ": " + strings.TrimPrefix(msg, "yaml: ")
		}
	}
	return lc.withFiles(msg)
}

// suggestAttr proposes the service attribute closest to a mistyped one in
// a path like services.web.enviroment.
func suggestAttr(path string) string {
	parts := strings.Split(path, ".")
	if len(parts) != 3 || parts[0] != "services" {
		return ""
	}
	if s := spec.Suggest(parts[2], serviceAttributeNames()); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}
