package envlist

import "testing"

// The last of a name wins; a name is matched whole, not as a prefix; an
// empty value is set.
func TestLookup(t *testing.T) {
	env := []string{"A=1", "AB=2", "A=3", "EMPTY=", "NOEQUALS"}
	for _, c := range []struct {
		key, want string
		set       bool
	}{
		{"A", "3", true}, {"AB", "2", true}, {"EMPTY", "", true}, {"NOEQUALS", "", false}, {"B", "", false},
	} {
		if v, ok := Lookup(env, c.key); v != c.want || ok != c.set {
			t.Errorf("Lookup(%s) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.set)
		}
		if v := Get(env, c.key); v != c.want {
			t.Errorf("Get(%s) = %q", c.key, v)
		}
	}
}
