package dockerapi

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// filters is a decoded ?filters= value: key → accepted values.
type filters map[string][]string

// parseFilters accepts both encodings clients send: {"k":["v"]} and the
// older {"k":{"v":true}}.
func parseFilters(raw string) (filters, error) {
	f := filters{}
	if raw == "" {
		return f, nil
	}
	var generic map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &generic); err != nil {
		return nil, invalidParam("invalid filters %q: %v", raw, err)
	}
	for k, v := range generic {
		var list []string
		if json.Unmarshal(v, &list) == nil {
			f[k] = list
			continue
		}
		var set map[string]bool
		if err := json.Unmarshal(v, &set); err != nil {
			return nil, invalidParam("invalid filter %q: expected a list or a set of values", k)
		}
		for val, on := range set {
			if on {
				f[k] = append(f[k], val)
			}
		}
	}
	return f, nil
}

// labels returns the label filters as a backend label selector
// ("k=v" → v; "k" alone → "").
func (f filters) labels() map[string]string {
	out := map[string]string{}
	for _, l := range f["label"] {
		k, v, _ := strings.Cut(l, "=")
		out[k] = v
	}
	return out
}

// boolValue reads a query flag as dockerd does: anything but "", "0",
// "false" and "no" is true.
func boolValue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// randomName makes a container name when the client gives none, in
// Docker's adjective_noun style (with cornus's dogwood flavour).
func randomName() string {
	adjectives := []string{"amber", "bright", "calm", "crisp", "eager", "gentle", "hardy", "lively", "quiet", "swift", "vivid", "wild"}
	nouns := []string{"bract", "blossom", "branch", "drupe", "grove", "leaf", "petal", "root", "sapling", "seed", "twig", "willow"}
	pick := func(l []string) string {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(l))))
		return l[n.Int64()]
	}
	suffix, _ := rand.Int(rand.Reader, big.NewInt(10000))
	return fmt.Sprintf("%s_%s_%04d", pick(adjectives), pick(nouns), suffix.Int64())
}
