package spec

import (
	"fmt"
	"strings"
	"time"
)

// Pull policies, as Compose names them. Refresh pulls when the local image
// was last tagged (pulled or loaded) longer ago than an interval: daily,
// weekly and every_<duration> are refresh with 24h, 7 days and that
// duration; refresh alone has interval 0 (pull whenever present).
const (
	PullAlways  = "always"
	PullNever   = "never"
	PullMissing = "missing"
	PullBuild   = "build"
	PullRefresh = "refresh"
)

// ParsePullPolicy returns a pull policy's kind and, for refresh, its
// interval. "" and if_not_present are missing.
func ParsePullPolicy(s string) (kind string, every time.Duration, err error) {
	switch s {
	case "", PullMissing, "if_not_present":
		return PullMissing, 0, nil
	case PullAlways, PullNever, PullBuild, PullRefresh:
		return s, 0, nil
	case "daily":
		return PullRefresh, 24 * time.Hour, nil
	case "weekly":
		return PullRefresh, 7 * 24 * time.Hour, nil
	}
	if d, ok := strings.CutPrefix(s, "every_"); ok {
		dur, err := ParseDuration(d)
		if err != nil || dur <= 0 {
			return "", 0, fmt.Errorf("%q: every_ takes a positive duration such as every_12h or every_1d2h", s)
		}
		return PullRefresh, dur.Std(), nil
	}
	return "", 0, fmt.Errorf("%q is not one of always, never, missing, build, refresh, daily, weekly, every_<duration>", s)
}
