package dockerapi

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

type versionKey struct{}

var versionPrefix = regexp.MustCompile(`^/v([0-9]+\.[0-9]+)(/|$)`)

// withVersion strips an optional /vX.Y prefix, rejects versions outside
// [MinAPIVersion, MaxAPIVersion] as dockerd does, records the version in
// the request context and sets the Engine's identifying headers.
func withVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Api-Version", MaxAPIVersion)
		h.Set("Server", serverHeader())
		h.Set("Ostype", "linux")
		h.Set("Docker-Experimental", "false")
		version := MaxAPIVersion
		if m := versionPrefix.FindStringSubmatch(r.URL.Path); m != nil {
			version = m[1]
			strip := "/v" + m[1]
			r.URL.Path = strings.TrimPrefix(r.URL.Path, strip)
			if r.URL.RawPath != "" {
				r.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, strip)
			}
			if r.URL.Path == "" {
				r.URL.Path = "/"
			}
			switch {
			case versionLess(MaxAPIVersion, version):
				writeMessage(w, http.StatusBadRequest, fmt.Sprintf("client version %s is too new. Maximum supported API version is %s", version, MaxAPIVersion))
				return
			case versionLess(version, MinAPIVersion):
				writeMessage(w, http.StatusBadRequest, fmt.Sprintf("client version %s is too old. Minimum supported API version is %s, please upgrade your client to a newer version", version, MinAPIVersion))
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), versionKey{}, version)))
	})
}

// apiVersion is the version the request was made with.
func apiVersion(r *http.Request) string {
	if v, ok := r.Context().Value(versionKey{}).(string); ok {
		return v
	}
	return MaxAPIVersion
}

// versionLess reports a < b for "major.minor" versions.
func versionLess(a, b string) bool {
	am, an := splitVersion(a)
	bm, bn := splitVersion(b)
	return am < bm || (am == bm && an < bn)
}

func splitVersion(v string) (int, int) {
	maj, min, _ := strings.Cut(v, ".")
	x, _ := strconv.Atoi(maj)
	y, _ := strconv.Atoi(min)
	return x, y
}

// atLeast reports whether the request's API version is >= v.
func atLeast(r *http.Request, v string) bool { return !versionLess(apiVersion(r), v) }
