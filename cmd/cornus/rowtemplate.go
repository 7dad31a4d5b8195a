package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"text/template"

	"github.com/cornus-dev/cornus/backends"
)

// rowTemplate is a docker-style --format Go template over ps rows;
// "table TEMPLATE" prints a header of the fields' names and aligns the
// columns.
type rowTemplate struct {
	t      *template.Template
	header string // "" without the table prefix
}

// templateFuncs are the functions docker's --format templates offer.
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"join":  strings.Join,
	"split": strings.Split,
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
	"title": func(s string) string {
		if s == "" {
			return s
		}
		return strings.ToUpper(s[:1]) + s[1:]
	},
	"truncate": func(s string, n int) string {
		if len(s) > n {
			return s[:n]
		}
		return s
	},
	"pad": func(s string, before, after int) string {
		return strings.Repeat(" ", before) + s + strings.Repeat(" ", after)
	},
}

var fieldRef = regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`)

// psTemplate parses --format: nil for the built-in table and json.
func psTemplate(format string) (*rowTemplate, error) {
	if format == "table" || format == "json" || format == "" {
		return nil, nil
	}
	body, table := strings.CutPrefix(format, "table ")
	// \t in a flag value means a tab, as docker reads it.
	body = strings.ReplaceAll(body, `\t`, "\t")
	t, err := template.New("format").Funcs(templateFuncs).Option("missingkey=error").Parse(body)
	if err != nil {
		return nil, fmt.Errorf("--format %q: %w (use table, json or a Go template such as '{{.Name}} {{.State}}')", format, err)
	}
	r := &rowTemplate{t: t}
	if table {
		r.header = fieldRef.ReplaceAllStringFunc(body, func(m string) string {
			return strings.ToUpper(fieldRef.FindStringSubmatch(m)[1])
		})
	}
	return r, nil
}

func (r *rowTemplate) print(w io.Writer, cs []backends.Container) error {
	rows := make([]any, len(cs))
	for i, c := range cs {
		rows[i] = psJSON(c)
	}
	return r.printRows(w, rows)
}

// printRows executes the template for each row, one per line.
func (r *rowTemplate) printRows(w io.Writer, rows []any) error {
	out := w
	var tw *tabwriter.Writer
	if r.header != "" {
		tw = tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		out = tw
		fmt.Fprintln(out, r.header)
	}
	for _, row := range rows {
		if err := r.t.Execute(out, row); err != nil {
			return fmt.Errorf("--format: %w", err)
		}
		fmt.Fprintln(out)
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}
