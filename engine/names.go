package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/buildinfo"
	"github.com/cornus-dev/cornus/spec"
)

// containerName is docker compose's <project>-<service>-<n>, or the app's
// fixed container name.
func containerName(project string, a spec.App, replica int) string {
	if a.ContainerName != "" {
		return a.ContainerName
	}
	return fmt.Sprintf("%s-%s-%d", project, a.Name, replica)
}

// projectLabels select everything of a project.
// projectLabels and appLabels select by docker compose's labels, which
// cornus sets too: a project docker compose created is found as well.
func projectLabels(project string) map[string]string {
	return map[string]string{backends.ComposeProject: project}
}

func appLabels(project, app string) map[string]string {
	return map[string]string{backends.ComposeProject: project, backends.ComposeService: app}
}

// containerLabels identify a replica, for cornus and for docker compose.
func containerLabels(p spec.Project, a spec.App, replica int, hash string) map[string]string {
	project := p.Name
	deps := sortedDeps(a)
	var composeDeps []string
	for _, d := range deps {
		dep := a.DependsOn[d]
		composeDeps = append(composeDeps, fmt.Sprintf("%s:%s:%t", d, dep.Condition, dep.Restart))
	}
	l := map[string]string{
		backends.LabelProject:      project,
		backends.LabelApp:          a.Name,
		backends.LabelReplica:      strconv.Itoa(replica),
		backends.LabelConfigHash:   hash,
		backends.LabelDependsOn:    strings.Join(deps, ","),
		backends.ComposeProject:    project,
		backends.ComposeService:    a.Name,
		backends.ComposeNumber:     strconv.Itoa(replica),
		backends.ComposeOneoff:     "False",
		backends.ComposeConfigHash: hash,
		backends.ComposeDependsOn:  strings.Join(composeDeps, ","),
		backends.ComposeVersion:    "cornus-" + buildinfo.Version(),
	}
	if len(p.ConfigFiles) > 0 {
		l[backends.ComposeConfigFiles] = strings.Join(p.ConfigFiles, ",")
		l[backends.ComposeWorkingDir] = p.WorkingDir
	}
	if a.StopGracePeriod != nil {
		l[backends.LabelStopGrace] = strconv.FormatFloat(a.StopGracePeriod.Std().Seconds(), 'f', -1, 64)
	}
	return l
}

func sortedDeps(a spec.App) []string {
	deps := make([]string, 0, len(a.DependsOn))
	for d := range a.DependsOn {
		deps = append(deps, d)
	}
	sort.Strings(deps)
	return deps
}

// ConfigHash is the configuration hash up labels app name's containers
// with (com.docker.compose.config-hash), from the spec, its files and
// environ alone: for an app built from a build section, or sharing a
// namespace of another app's container, the label also counts that
// image's or container's ID, which only an up knows. environ is
// KEY=VALUE pairs.
func ConfigHash(p spec.Project, name string, environ []string) (string, error) {
	a, ok := p.Services[name]
	if !ok {
		return "", fmt.Errorf("no such service: %s", name)
	}
	files, err := appFiles(a, environMap(environ), false)
	if err != nil {
		return "", err
	}
	return configHash(p, a, files, nil, ""), nil
}

// configHash fingerprints everything that requires recreating a replica
// when it changes: the app (minus scale, ordering and engine-run hooks), the
// runtime names of its networks and volumes, its files' content and, for
// an image built from a build section, that image's ID (built). (How a
// change rolls out, update, is the workload's, not the replicas'.)
func configHash(p spec.Project, a spec.App, files []backends.File, refs map[string]string, built string) string {
	a = spec.DeepCopy(a)
	// A service reference counts as the container it names (a recreated
	// target recreates the app, as docker compose does), in the form the
	// hash has always had, so existing containers keep their hash.
	for _, m := range []*string{&a.NetworkMode, &a.PidMode, &a.IpcMode} {
		if s, ok := serviceRef(*m); ok {
			*m = "container:" + refs[s]
		}
	}
	a.Replicas, a.Update, a.DependsOn, a.Hooks, a.Devcontainer, a.Watch = nil, nil, nil, nil, nil, nil
	// A built image counts by its ID (a rebuild that changed it recreates
	// the app, as docker compose does), not by how it was built.
	a.Build = nil
	nets := map[string]string{}
	for _, n := range a.Networks {
		nets[n.Name] = p.Networks[n.Name].Name
	}
	vols := map[string]string{}
	for _, v := range a.Volumes {
		if v.Source != "" {
			vols[v.Source] = p.Volumes[v.Source].Name
		}
	}
	fileSums := make([]string, len(files))
	for i, f := range files {
		s := sha256.Sum256(f.Content)
		fileSums[i] = fmt.Sprintf("%s:%d:%d:%o:%x", f.Target, f.UID, f.GID, f.Mode, s)
	}
	b, _ := json.Marshal(struct {
		App      spec.App
		Networks map[string]string
		Volumes  map[string]string
		Files    []string
		Built    string `json:",omitempty"`
	}{a, nets, vols, fileSums, built})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
