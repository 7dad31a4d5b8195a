package builder

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// TestExtend: stages are appended FROM the Dockerfile's target (named
// for them when it has no name), each FROM the one before, and the image
// ends as the target's user, whatever the stages switched to.
func TestExtend(t *testing.T) {
	for _, c := range []struct {
		name, df, target string
		wantTarget       string
		want             []string
	}{
		{"last stage, unnamed", "FROM busybox AS base\nUSER app\nFROM base\nRUN true\n", "", "cornus_stage_1",
			[]string{"FROM base AS cornus_target\n", "FROM cornus_target AS cornus_stage_0\nUSER root\n", "FROM cornus_stage_0 AS cornus_stage_1\n", "USER app\n"}},
		{"named target", "FROM busybox AS dev\nUSER dev\nFROM busybox AS prod\n", "dev", "cornus_stage_1",
			[]string{"FROM dev AS cornus_stage_0", "USER dev\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"Dockerfile": c.df})
			src, err := openSource(context.Background(), LocalFiles{}, spec.Build{Context: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer src.cleanup()
			j := job{service: "s", build: spec.Build{Context: dir, Target: c.target, Extend: []spec.BuildStage{
				{Name: "one", Instructions: "USER root\nRUN echo one"}, {Name: "two", Instructions: "RUN echo two"},
			}}}
			target, err := extend(context.Background(), j, src, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := src.dockerfile.Open(src.filename)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			got := string(data)
			if target != c.wantTarget {
				t.Errorf("target %q, want %q", target, c.wantTarget)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("the Dockerfile lacks %q:\n%s", w, got)
				}
			}
			if !strings.HasSuffix(got, c.want[len(c.want)-1]) {
				t.Errorf("the Dockerfile must end as the target's user:\n%s", got)
			}
		})
	}
}
