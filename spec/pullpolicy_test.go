package spec

import (
	"testing"
	"time"
)

// TestParsePullPolicy locks down issue 16's pull_policy values: every
// Compose value loads and means what docker compose makes of it.
func TestParsePullPolicy(t *testing.T) {
	for in, want := range map[string]struct {
		kind  string
		every time.Duration
	}{
		"": {PullMissing, 0}, "missing": {PullMissing, 0}, "if_not_present": {PullMissing, 0},
		"always": {PullAlways, 0}, "never": {PullNever, 0}, "build": {PullBuild, 0}, "refresh": {PullRefresh, 0},
		"daily": {PullRefresh, 24 * time.Hour}, "weekly": {PullRefresh, 7 * 24 * time.Hour},
		"every_12h": {PullRefresh, 12 * time.Hour}, "every_1d2h": {PullRefresh, 26 * time.Hour}, "every_90m": {PullRefresh, 90 * time.Minute},
	} {
		kind, every, err := ParsePullPolicy(in)
		if err != nil || kind != want.kind || every != want.every {
			t.Errorf("%q: %s %v %v, want %s %v", in, kind, every, err, want.kind, want.every)
		}
	}
	for _, bad := range []string{"every_", "every_x", "every_0s", "hourly", "Always"} {
		if _, _, err := ParsePullPolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
