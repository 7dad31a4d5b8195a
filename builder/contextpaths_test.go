package builder

import (
	"slices"
	"testing"
)

// TestContextPaths: a builder without BuildKit's session gets only the
// context paths the Dockerfile reads (COPY/ADD sources, RUN bind mounts
// of the context), all of it when that cannot be known.
func TestContextPaths(t *testing.T) {
	for _, c := range []struct {
		name, df string
		want     []string
		all      bool
	}{
		{"copies", "FROM x AS a\nCOPY --from=a /x /y\nCOPY [\"a b\", \"c\", \"/d/\"]\nADD https://example.com/f /f\nADD --chown=1 src/ /src\n", []string{"a b", "c", "src"}, false},
		{"nothing read", "FROM x\nRUN true\n", nil, false},
		{"a bind of the context", "FROM x\nRUN --mount=type=bind,source=tools,target=/t true\nRUN --mount=type=cache,target=/c true\n", []string{"tools"}, false},
		{"the whole context bound", "FROM x\nRUN --mount=target=/src make\n", nil, true},
		{"a variable", "FROM x\nARG F\nCOPY $F /z\n", nil, true},
		{"everything", "FROM x\nCOPY . /app\n", nil, true},
		{"a bind from a stage", "FROM x\nRUN --mount=type=bind,from=a,source=/x,target=/y true\n", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, all, err := contextPaths([]byte(c.df))
			if err != nil {
				t.Fatal(err)
			}
			if all != c.all || (!all && !slices.Equal(got, c.want)) {
				t.Fatalf("got %q all=%v, want %q all=%v", got, all, c.want, c.all)
			}
		})
	}
}
