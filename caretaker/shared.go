package caretaker

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// The volume a remote-mode companion shares with its app.
const (
	// SharedDir is where the companion binds it (rshared).
	SharedDir = "/cornus-shared"
	// AgentDir is where the app sees the agent sockets of exec
	// --forward-agent (read-only; a socket connects all the same).
	AgentDir = "/run/cornus-agent"
	// LabelSharedVolume marks the shared volume with its app.
	LabelSharedVolume = "dev.cornus.caretaker-volume"
	// LabelLocalMounts carries, on an app of a remote-mode deployment, the
	// client-local mounts its companion serves (JSON of []AppMount). Only
	// the server sets it; it refuses it in what a client sends.
	LabelLocalMounts = "dev.cornus.local-mounts"

	mountsSubdir = "mounts"
	pinsSubdir   = "pins"
	agentSubdir  = "agent"
)

// pinnedFile is where, below the shared volume, the companion pins the
// single file of export index (mountrole.go): what the app binds.
func pinnedFile(index int, file string) string {
	return path.Join(pinsSubdir, strconv.Itoa(index)+"-"+file)
}

// fileName reports whether f is empty (a directory) or one path
// component.
func fileName(f string) bool {
	return f == "" || (f != "." && f != ".." && !strings.ContainsAny(f, "/\x00"))
}

// AppMount is one client-local mount of an app in remote mode.
type AppMount struct {
	Index    int    `json:"index"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	// File is set for a single-file source: the export is its parent with
	// only File visible, and the app binds File.
	File string `json:"file,omitempty"`
}

// maxMountsLabel bounds the label's JSON.
const maxMountsLabel = 64 << 10

// AppMounts reads an app's client-local mounts from LabelLocalMounts.
func AppMounts(a spec.App) ([]AppMount, error) {
	raw, ok := a.Labels[LabelLocalMounts]
	if !ok {
		return nil, nil
	}
	if len(raw) > maxMountsLabel {
		return nil, fmt.Errorf("services.%s.labels.%s: %d bytes, at most %d", a.Name, LabelLocalMounts, len(raw), maxMountsLabel)
	}
	var ms []AppMount
	if err := json.Unmarshal([]byte(raw), &ms); err != nil {
		return nil, fmt.Errorf("services.%s.labels.%s: %w", a.Name, LabelLocalMounts, err)
	}
	if len(ms) > maxMounts {
		return nil, fmt.Errorf("services.%s.labels.%s: %d mounts, at most %d", a.Name, LabelLocalMounts, len(ms), maxMounts)
	}
	files := map[int]string{}
	for i, m := range ms {
		at := fmt.Sprintf("services.%s.labels.%s[%d]", a.Name, LabelLocalMounts, i)
		if m.Index < 0 || m.Index >= maxMounts {
			return nil, fmt.Errorf("%s: index %d", at, m.Index)
		}
		if !path.IsAbs(m.Target) || path.Clean(m.Target) == "/" {
			return nil, fmt.Errorf("%s: target %q must be an absolute path below /", at, m.Target)
		}
		if !fileName(m.File) {
			return nil, fmt.Errorf("%s: file %q is not a file name", at, m.File)
		}
		if f, ok := files[m.Index]; ok && f != m.File {
			return nil, fmt.Errorf("%s: export %d is both %q and %q: one export is one directory or one file", at, m.Index, f, m.File)
		}
		files[m.Index] = m.File
	}
	return ms, nil
}

// EncodeAppMounts is the LabelLocalMounts value of ms.
func EncodeAppMounts(ms []AppMount) string {
	b, _ := json.Marshal(ms)
	return string(b)
}
