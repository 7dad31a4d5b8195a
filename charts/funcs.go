package charts

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// funcs are the template functions the chart uses, as Helm defines them
// (its own: include, required, fail, toYaml, lookup; sprig's: the rest).
func funcs(root *template.Template) template.FuncMap {
	return template.FuncMap{
		"include": func(name string, data any) (string, error) {
			var b bytes.Buffer
			err := root.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
		"required": func(msg string, v any) (any, error) {
			if empty(v) {
				return nil, errors.New(msg)
			}
			return v, nil
		},
		"fail":   func(msg string) (string, error) { return "", errors.New(msg) },
		"toYaml": toYaml,
		// Nothing is looked up: as under helm template, which does not
		// talk to a cluster.
		"lookup":        func(...string) map[string]any { return map[string]any{} },
		"default":       func(d, v any) any { return pick(empty(v), d, v) },
		"quote":         quote,
		"trunc":         func(n int, s string) string { return s[:min(n, len(s))] },
		"trimSuffix":    func(suf, s string) string { return strings.TrimSuffix(s, suf) },
		"indent":        indent,
		"nindent":       func(n int, s string) string { return "\n" + indent(n, s) },
		"sha256sum":     func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) },
		"b64enc":        func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"b64dec":        b64dec,
		"randAlphaNum":  randAlphaNum,
		"dict":          dict,
		"list":          func(v ...any) []any { return v },
		"concat":        concat,
		"genCA":         genCA,
		"genSignedCert": genSignedCert,
	}
}

func pick(cond bool, a, b any) any {
	if cond {
		return a
	}
	return b
}

// empty is sprig's: nil, false, 0, "" and empty collections.
func empty(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return r.Len() == 0
	case reflect.Bool:
		return !r.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return r.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return r.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return r.Float() == 0
	case reflect.Pointer, reflect.Interface:
		return r.IsNil()
	}
	return false
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// toYaml is Helm's: sigs.k8s.io/yaml, without the last newline.
func toYaml(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

func b64dec(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err.Error() // as sprig does
	}
	return string(b)
}

func randAlphaNum(n int) (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b), nil
}

func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, errors.New("dict: want key value pairs")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[str(kv[i])] = kv[i+1]
	}
	return m, nil
}

// concat joins lists ([]any, or nil for a value that is not set).
func concat(lists ...any) ([]any, error) {
	var out []any
	for _, l := range lists {
		if l == nil {
			continue
		}
		r := reflect.ValueOf(l)
		if r.Kind() != reflect.Slice && r.Kind() != reflect.Array {
			return nil, fmt.Errorf("concat: %T is not a list", l)
		}
		for i := range r.Len() {
			out = append(out, r.Index(i).Interface())
		}
	}
	return out, nil
}

// quote is sprig's: each value quoted, nil ones left out.
func quote(vs ...any) string {
	var out []string
	for _, v := range vs {
		if v != nil {
			out = append(out, fmt.Sprintf("%q", str(v)))
		}
	}
	return strings.Join(out, " ")
}
