package compose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// StandardizeJSONC turns JSON with comments (// and /* */) and trailing
// commas — the dialect of devcontainer.json — into plain JSON. Comments and
// removed commas become spaces so byte offsets, and therefore line:column
// positions in later errors, stay those of the original text.
func StandardizeJSONC(src []byte) ([]byte, error) {
	out := bytes.Clone(src)
	lastSignificant := -1 // index of the last non-space byte kept, to find trailing commas
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			end, err := skipString(out, i)
			if err != nil {
				return nil, err
			}
			i = end
			lastSignificant = end
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			start := i
			out[i], out[i+1] = ' ', ' '
			i += 2
			for ; ; i++ {
				if i+1 >= len(out) {
					line, col := position(src, start)
					return nil, fmt.Errorf("%d:%d: unterminated /* comment", line, col)
				}
				if out[i] == '*' && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i++
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
		case c == '}' || c == ']':
			if lastSignificant >= 0 && out[lastSignificant] == ',' {
				out[lastSignificant] = ' '
			}
			lastSignificant = i
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastSignificant = i
		}
	}
	return out, nil
}

// skipString returns the index of the closing quote of the string at i.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j, nil
		case '\n':
			line, col := position(b, i)
			return 0, fmt.Errorf("%d:%d: unterminated string", line, col)
		}
	}
	line, col := position(b, i)
	return 0, fmt.Errorf("%d:%d: unterminated string", line, col)
}

// position converts a byte offset into a 1-based line and column.
func position(b []byte, off int) (line, col int) {
	off = max(0, min(off, len(b)))
	line = 1 + bytes.Count(b[:off], []byte("\n"))
	col = off - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}

// UnmarshalJSONC decodes JSONC into v, reporting syntax and type errors with
// the line and column of the original text.
func UnmarshalJSONC(src []byte, v any) error {
	std, err := StandardizeJSONC(src)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(std, v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := position(src, int(se.Offset)-1) // Offset is just past the bad byte
			return fmt.Errorf("%d:%d: %s", line, col, se.Error())
		case errors.As(err, &te):
			line, col := position(src, int(te.Offset)-1)
			return fmt.Errorf("%d:%d: %s: expected %s, got %s", line, col, te.Field, jsonKind(te.Type), article(te.Value))
		}
		return err
	}
	return nil
}

// jsonKind names a Go type as the JSON value it accepts.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64, reflect.Float32, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // json.RawMessage
			return "a value"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	}
	return "a " + v
}
