package builder

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
	"github.com/tonistiigi/fsutil"

	"github.com/cornus-dev/cornus/backends"
)

// targetAlias names the Dockerfile's target stage when it has no name.
const targetAlias = "cornus_target"

// extend applies j's added stages (spec.Build.Extend) to src: the
// Dockerfile gets them appended, each FROM the one before and the first
// FROM the target, then the target's user back; their directories join
// the context under spec.StageDir(i). It returns the target to build.
func extend(ctx context.Context, j job, src *source, args map[string]string, images backends.Images) (string, error) {
	df, err := readDockerfile(src)
	if err != nil {
		return "", err
	}
	res, err := parser.Parse(bytes.NewReader(df))
	if err != nil {
		return "", fmt.Errorf("dockerfile: %w", err)
	}
	st, err := parseStages(res, args)
	if err != nil {
		return "", err
	}
	target, err := st.find(j.build.Target)
	if err != nil {
		return "", err
	}
	user := st.user(ctx, target, images)
	lines := strings.Split(string(df), "\n")
	prev := st.stages[target].name
	if prev == "" {
		prev = targetAlias
		end := st.stages[target].endLine - 1
		lines[end] += " AS " + targetAlias
	}
	var out strings.Builder
	out.WriteString(strings.Join(lines, "\n") + "\n")
	dirs := map[string]fsutil.FS{}
	for i, stage := range j.build.Extend {
		name := fmt.Sprintf("cornus_stage_%d", i)
		fmt.Fprintf(&out, "\n# %s\nFROM %s AS %s\n%s\n", strings.ReplaceAll(stage.Name, "\n", " "), prev, name, stage.Instructions)
		prev = name
		if stage.Dir != "" {
			fs, err := src.dir(ctx, stage.Dir, nil)
			if err != nil {
				return "", fmt.Errorf("build stage %s: %w", stage.Name, err)
			}
			dirs[strconv.Itoa(i)] = fs
		}
	}
	if user != "" {
		fmt.Fprintf(&out, "USER %s\n", user)
	}
	if err := src.replaceDockerfile(out.String()); err != nil {
		return "", err
	}
	if len(dirs) > 0 {
		src.context = &stageFS{ctx: src.context, dirs: dirs}
	}
	return prev, nil
}

// replaceDockerfile makes text the build's Dockerfile (in a private
// temporary directory).
func (s *source) replaceDockerfile(text string) error {
	tmp, err := os.MkdirTemp("", "cornus-dockerfile-")
	if err != nil {
		return err
	}
	s.onCleanup(func() { _ = os.RemoveAll(tmp) })
	name := cmp.Or(s.filename, "Dockerfile") // errors name the file the user wrote
	if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o600); err != nil {
		return err
	}
	fs, root, err := rootFS(tmp)
	if err != nil {
		return err
	}
	s.onCleanup(func() { _ = root.Close() })
	s.dockerfile, s.filename = fs, name
	return nil
}

// stage is one FROM of a Dockerfile.
type stage struct {
	name    string // its AS name, lowercased
	base    string // what it is FROM, ARGs expanded
	user    string // its last USER
	endLine int    // the FROM instruction's last line (1-based)
}

type stages struct{ stages []stage }

// parseStages reads a Dockerfile's stages (FROM lines expanded with the
// ARGs before the first FROM).
func parseStages(res *parser.Result, args map[string]string) (stages, error) {
	lex := shell.NewLex(res.EscapeToken)
	meta := map[string]string{}
	var out stages
	for _, n := range res.AST.Children {
		switch strings.ToLower(n.Value) {
		case "arg":
			if len(out.stages) > 0 {
				continue
			}
			for a := n.Next; a != nil; a = a.Next {
				name, def, hasDef := strings.Cut(a.Value, "=")
				if v, ok := args[name]; ok {
					meta[name] = v
				} else if hasDef {
					meta[name], _, _ = lex.ProcessWord(def, envOf(meta))
				}
			}
		case "from":
			if n.Next == nil {
				return out, fmt.Errorf("dockerfile line %d: FROM needs an image", n.StartLine)
			}
			base, _, err := lex.ProcessWord(n.Next.Value, envOf(meta))
			if err != nil {
				return out, fmt.Errorf("dockerfile line %d: %w", n.StartLine, err)
			}
			s := stage{base: base, endLine: n.EndLine}
			if as := n.Next.Next; as != nil && strings.EqualFold(as.Value, "as") && as.Next != nil {
				s.name = strings.ToLower(as.Next.Value)
			}
			out.stages = append(out.stages, s)
		case "user":
			if len(out.stages) > 0 && n.Next != nil {
				out.stages[len(out.stages)-1].user = n.Next.Value
			}
		}
	}
	if len(out.stages) == 0 {
		return out, fmt.Errorf("dockerfile: no FROM")
	}
	return out, nil
}

// find is the index of the stage named target, or the last one.
func (st stages) find(target string) (int, error) {
	if target == "" {
		return len(st.stages) - 1, nil
	}
	for i, s := range st.stages {
		if s.name == strings.ToLower(target) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("dockerfile: no stage named %q (target)", target)
}

// user is the user stage i runs as: its last USER, else its base's (an
// earlier stage's, or the base image's as the backend's store has it;
// "" when unknown: root).
func (st stages) user(ctx context.Context, i int, images backends.Images) string {
	for range len(st.stages) { // a stage is FROM an earlier one: no cycle
		s := st.stages[i]
		if s.user != "" {
			return s.user
		}
		j := -1
		for k := range i {
			if st.stages[k].name != "" && st.stages[k].name == strings.ToLower(s.base) {
				j = k
			}
		}
		if j < 0 {
			if images == nil || strings.EqualFold(s.base, "scratch") {
				return ""
			}
			img, err := images.InspectImage(ctx, s.base)
			if err != nil {
				return ""
			}
			return img.User
		}
		i = j
	}
	return ""
}
