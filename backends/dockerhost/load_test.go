package dockerhost

import (
	"slices"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// Locks down the parsing of the image load stream (tagged and untagged
// images) and of the pull progress stream with its error message.
func TestLoadAndPullStreams(t *testing.T) {
	refs, err := loadedRefs(strings.NewReader(`{"stream":"Loaded image: a/b:1\n"}
{"stream":"Loaded image ID: sha256:abc\n"}
{"status":"Loading layer","progressDetail":{"current":1,"total":2},"id":"x"}`))
	if err != nil || !slices.Equal(refs, []string{"a/b:1", "sha256:abc"}) {
		t.Fatalf("loadedRefs: %v %v", err, refs)
	}
	if _, err := loadedRefs(strings.NewReader(`{"errorDetail":{"message":"bad tar"},"error":"bad tar"}`)); err == nil || err.Error() != "bad tar" {
		t.Fatalf("load error: %v", err)
	}
	var got []backends.PullProgress
	err = decodePull(strings.NewReader(`{"status":"Pulling from library/x","id":"1"}
{"status":"Downloading","progressDetail":{"current":5,"total":10},"id":"layer"}
{"errorDetail":{"message":"manifest unknown"}}`), func(p backends.PullProgress) { got = append(got, p) })
	if err == nil || err.Error() != "manifest unknown" || len(got) != 2 || got[1] != (backends.PullProgress{ID: "layer", Status: "Downloading", Current: 5, Total: 10}) {
		t.Fatalf("decodePull: %v %+v", err, got)
	}
	if err := decodePull(strings.NewReader(`{"status":"ok"}`), nil); err != nil {
		t.Fatalf("nil progress: %v", err)
	}
}
