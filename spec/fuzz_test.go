package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad: the deploy.yaml loader never panics, and whatever it accepts
// prints to text that loads back to the same project.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "golden.yaml"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: a\nimage: b\nports: [{container: 80}]\n"))
	f.Add([]byte(`{"name":"a","services":{"w":{"image":"x","dependsOn":{"w":{"condition":"service_started"}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Load("fuzz.yaml", "/fuzz", data)
		if err != nil {
			return
		}
		out, err := p.EncodeYAML()
		if err != nil {
			t.Fatalf("encode accepted project: %v", err)
		}
		q, err := Load("again.yaml", "/fuzz", out)
		if err != nil {
			t.Fatalf("printed spec does not reload: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the project:\n%s", out)
		}
	})
}
