package translate

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/cornus-dev/cornus/compose"
)

// FuzzComposeToSpec: arbitrary compose.yaml text never panics the
// Compose→spec path, and whatever translates either validates or fails
// validation with a located error.
func FuzzComposeToSpec(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "testdata", "compose", "*", "compose.yaml"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("services:\n  web:\n    image: nginx\n    ports: ['8080:80/udp']\n"))
	f.Add([]byte("services:\n  a: {image: x, depends_on: {b: {condition: service_healthy}}}\n  b: {image: y, healthcheck: {test: 'true'}}\n"))
	// compose-go logs warnings (obsolete `version:`, ...) through logrus to
	// stderr; a fuzz worker's stderr is a pipe nobody drains while it runs,
	// so those writes would soon block every worker.
	logrus.SetOutput(io.Discard)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		lr, err := compose.Load(context.Background(), compose.Options{WorkingDir: dir, ProjectName: "fuzz"})
		if err != nil {
			return
		}
		p, _ := Translate(lr.Project)
		if err := p.Validate(); err != nil && err.Error() == "" {
			t.Fatal("empty validation error")
		}
	})
}
