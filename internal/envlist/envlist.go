// Package envlist reads variables from an environment given as a list of
// KEY=VALUE (a command's, a server's configured one) as the process's own
// is read: the last of a name wins; on Windows names match in any case
// (its PATH is spelled Path).
package envlist

import (
	"runtime"
	"strings"
)

// Lookup is key's value in environ and whether it is set.
func Lookup(environ []string, key string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(environ[i], "=")
		if ok && (k == key || runtime.GOOS == "windows" && strings.EqualFold(k, key)) {
			return v, true
		}
	}
	return "", false
}

// Get is key's value in environ ("" when unset).
func Get(environ []string, key string) string {
	v, _ := Lookup(environ, key)
	return v
}
