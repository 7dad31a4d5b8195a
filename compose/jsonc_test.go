package compose

import (
	"encoding/json"
	"testing"
)

// TestStandardizeJSONC locks down the devcontainer.json dialect: comments
// and trailing commas removed, strings untouched, positions preserved.
func TestStandardizeJSONC(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"{\"a\": 1, // c\n}", "{\"a\": 1      \n}"},
		{`{"a": [1, 2,], }`, `{"a": [1, 2 ]  }`},
		{`/* x */{"u": "http://x/*y*/"}`, `       {"u": "http://x/*y*/"}`},
		{`{"s": "a\"//b",}`, `{"s": "a\"//b" }`},
		{"{\"a\":1 /* multi\nline */}", "{\"a\":1         \n       }"},
	}
	for _, c := range cases {
		got, err := StandardizeJSONC([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("StandardizeJSONC(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestUnmarshalJSONCErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"{\n  \"a\": 1\n  \"b\": 2\n}", `3:3: invalid character '"' after object key:value pair`},
		{"{\"a\": /* open", `1:7: unterminated /* comment`},
		{"{\"a\": \"open\n}", `1:7: unterminated string`},
		{"{\"image\": 5}", `1:11: image: expected a string, got a number`},
	}
	for _, c := range cases {
		var v struct {
			Image string `json:"image"`
		}
		err := UnmarshalJSONC([]byte(c.in), &v)
		if err == nil || err.Error() != c.want {
			t.Errorf("UnmarshalJSONC(%q) = %v; want %s", c.in, err, c.want)
		}
	}
}

// FuzzStandardizeJSONC: never panics, keeps the length (so error positions
// stay true), leaves plain JSON untouched, and removes nothing from strings.
func FuzzStandardizeJSONC(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, "{// c\n\"a\": [1,],}", `/* */ {"s": "//"}`, `{"a": "\"",}`, `[,]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := StandardizeJSONC(in)
		if err != nil {
			return
		}
		if len(out) != len(in) {
			t.Fatalf("length changed: %d -> %d", len(in), len(out))
		}
		if json.Valid(in) && string(out) != string(in) {
			t.Fatalf("valid JSON changed:\n%q\n%q", in, out)
		}
		var v any
		_ = UnmarshalJSONC(in, &v)
	})
}
