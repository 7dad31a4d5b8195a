package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// An answer's canonical form is the JSON of the fields a client acts on,
// so that the proxy's answer can be compared with dockerd's. The proxy
// rebuilds its answers from the backend's view (it is no pass-through), so
// fields dockerd fills from its own files (ResolvConfPath, GraphDriver,
// MaskedPaths defaults, ...) differ by design and are left out.

// listAnswer is what docker ps and docker compose read of GET
// /containers/json: which containers there are, what they are called, what
// runs and their labels (compose finds its projects by them).
type listAnswer struct {
	Id     string
	Names  []string
	Image  string
	State  string
	Labels map[string]string
}

// canonList keys the list by short ID (the order of a list is no
// promise) and splits it: the bench's own containers (own reports which),
// whose answers must agree, and the others on the daemon, which other
// users may change while the bench runs.
func canonList(body []byte, own func(labels map[string]string) bool) (mine, others string, err error) {
	var cs []listAnswer
	if err := json.Unmarshal(body, &cs); err != nil {
		return "", "", fmt.Errorf("container list: %w", err)
	}
	m, o := map[string]listAnswer{}, map[string]listAnswer{}
	for _, c := range cs {
		if own(c.Labels) {
			m[shortID(c.Id)] = c
		} else {
			o[shortID(c.Id)] = c
		}
	}
	mj, err := json.Marshal(m)
	if err != nil {
		return "", "", err
	}
	oj, err := json.Marshal(o)
	return string(mj), string(oj), err
}

func shortID(id string) string { return id[:min(12, len(id))] }

// inspectAnswer is what docker compose (ps, up's convergence, --wait) and
// docker inspect users read of GET /containers/{id}/json: identity, state
// and health (its probe log too, which a healthcheck changes every
// second), the config a recreate compares, mounts and network endpoints.
type inspectAnswer struct {
	Id, Name, Created, Image, Path string
	Args                           []string
	RestartCount                   int
	State                          struct {
		Status                                       string
		Running, Paused, Restarting, OOMKilled, Dead bool
		Pid, ExitCode                                int
		Error, StartedAt, FinishedAt                 string
		Health                                       *struct {
			Status        string
			FailingStreak int
			Log           []struct {
				Start, End string
				ExitCode   int
				Output     string
			}
		}
	}
	Config struct {
		Hostname, User, WorkingDir, Image string
		Tty, OpenStdin                    bool
		Cmd, Entrypoint, Env              []string
		Labels                            map[string]string
		Healthcheck                       *struct {
			Test                                          []string
			Interval, Timeout, StartPeriod, StartInterval int64
			Retries                                       int
		}
	}
	HostConfig struct {
		NetworkMode   string
		RestartPolicy struct {
			Name              string
			MaximumRetryCount int
		}
		Privileged, AutoRemove, ReadonlyRootfs bool
		Binds                                  []string
	}
	Mounts []struct {
		Type, Name, Source, Destination, Mode string
		RW                                    bool
	}
	NetworkSettings struct {
		Networks map[string]struct {
			NetworkID, IPAddress, Gateway, MacAddress string
			Aliases                                   []string
		}
	}
}

// canonInspect reads an inspect answer. dockerd 20.10 keeps what a
// create left empty as given, where the proxy names the meaning: an empty
// restart policy is "no", network mode "default" is the bridge on Linux.
func canonInspect(body []byte) (string, error) {
	var c inspectAnswer
	if err := json.Unmarshal(body, &c); err != nil {
		return "", fmt.Errorf("container inspect: %w", err)
	}
	if c.HostConfig.NetworkMode == "default" {
		c.HostConfig.NetworkMode = "bridge"
	}
	if c.HostConfig.RestartPolicy.Name == "" {
		c.HostConfig.RestartPolicy.Name = "no"
	}
	out, err := json.Marshal(c)
	return string(out), err
}

// firstDifference names the first field where two canonical answers
// differ, to show what a wrong answer got wrong.
func firstDifference(want, got string) string {
	var w, g any
	if json.Unmarshal([]byte(want), &w) != nil || json.Unmarshal([]byte(got), &g) != nil {
		return "unreadable answers"
	}
	if d := differ("", w, g); d != "" {
		return d
	}
	return "no difference"
}

func differ(path string, w, g any) string {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range wv {
			keys[k] = true
		}
		for k := range gv {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if d := differ(path+"."+k, wv[k], gv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok {
			break
		}
		for i := range min(len(wv), len(gv)) {
			if d := differ(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i]); d != "" {
				return d
			}
		}
		if len(wv) != len(gv) {
			return fmt.Sprintf("%s: dockerd %d entries, proxy %d", strings.TrimPrefix(path, "."), len(wv), len(gv))
		}
		return ""
	}
	wj, _ := json.Marshal(w)
	gj, _ := json.Marshal(g)
	if string(wj) == string(gj) {
		return ""
	}
	return fmt.Sprintf("%s: dockerd %s, proxy %s", strings.TrimPrefix(path, "."), clip(string(wj)), clip(string(gj)))
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
