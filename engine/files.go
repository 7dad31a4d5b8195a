package engine

import (
	"fmt"
	"strconv"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/spec"
)

// files resolves an app's secrets and configs into contents to place in
// its containers (read-only, mode 0444 unless set).
func (e *Engine) files(a spec.App) ([]backends.File, error) {
	var out []backends.File
	for _, set := range []struct {
		kind string
		fms  []spec.FileMount
	}{{"secrets", a.Secrets}, {"configs", a.Configs}} {
		for i, fm := range set.fms {
			at := fmt.Sprintf("services.%s.%s[%d]", a.Name, set.kind, i)
			var content []byte
			switch {
			case fm.File != "":
				b, err := boundedfile.Read(fm.File, boundedfile.SecretFile)
				if err != nil {
					return nil, fmt.Errorf("%s (%s): %w", at, fm.Name, err)
				}
				content = b
			case fm.Environment != "":
				if fm.Value != nil {
					content = []byte(*fm.Value)
				} else if v, ok := e.environ[fm.Environment]; ok {
					content = []byte(v)
				} else {
					return nil, fmt.Errorf("%s (%s): environment variable %s is not set: set it before deploying", at, fm.Name, fm.Environment)
				}
			default:
				content = []byte(fm.Content)
			}
			f := backends.File{Target: fm.Target, Content: content, Mode: 0o444}
			if fm.Mode != nil {
				f.Mode = uint32(*fm.Mode)
			}
			if fm.UID != "" {
				f.UID, _ = strconv.Atoi(fm.UID) // validated numeric
			}
			if fm.GID != "" {
				f.GID, _ = strconv.Atoi(fm.GID)
			}
			out = append(out, f)
		}
	}
	return out, nil
}
