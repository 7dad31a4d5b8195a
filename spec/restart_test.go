package spec

import (
	"encoding/json"
	"testing"
)

// A restart policy is written as the monitor has always written it
// (name, maxRetries), and the form records held before it had tags (Name,
// MaxRetries) reads back the same.
func TestRestartPolicyJSON(t *testing.T) {
	b, err := json.Marshal(RestartPolicy{Name: RestartOnFailure, MaxRetries: 2})
	if err != nil || string(b) != `{"name":"on-failure","maxRetries":2}` {
		t.Fatalf("encoded %s, %v", b, err)
	}
	for _, old := range []string{`{"name":"on-failure","maxRetries":2}`, `{"Name":"on-failure","MaxRetries":2}`} {
		var p RestartPolicy
		if err := json.Unmarshal([]byte(old), &p); err != nil || p != (RestartPolicy{Name: RestartOnFailure, MaxRetries: 2}) {
			t.Errorf("%s decoded %+v, %v", old, p, err)
		}
	}
}
