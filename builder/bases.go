package builder

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// imagesRead lists every image a Dockerfile reads, as the frontend
// resolves them: what its stages start FROM (the ARGs before the first
// FROM expanded: their defaults, overridden by args), what COPY --from
// and RUN --mount=from= name (the frontend takes those literally), in
// its own instructions and in its ONBUILD triggers; less scratch and the
// Dockerfile's stages (by name or index). An offline builder is handed
// these from the backend's store; a server checks each is the tenant's
// to read.
func imagesRead(dockerfile []byte, args map[string]string) ([]string, error) {
	r, err := read(dockerfile, args)
	return r.out, err
}

// hasCacheMount says whether a Dockerfile's RUN steps (or ONBUILD
// triggers) mount a cache (--mount=type=cache), which persists between
// builds on one builder.
func hasCacheMount(dockerfile []byte) (bool, error) {
	r, err := read(dockerfile, nil)
	return r.cache, err
}

// read reads the images and cache mounts of a Dockerfile.
func read(dockerfile []byte, args map[string]string) (*imageReader, error) {
	res, err := parser.Parse(bytes.NewReader(dockerfile))
	if err != nil {
		return &imageReader{}, fmt.Errorf("dockerfile: %w", err)
	}
	r := &imageReader{lex: shell.NewLex(res.EscapeToken), meta: map[string]string{}, stages: map[string]bool{}, seen: map[string]bool{}}
	for _, k := range builtinArgs {
		if v, ok := args[k]; ok { // declared or not, the frontend's own
			r.meta[k] = v
		}
	}
	inStage := false
	for _, n := range res.AST.Children {
		switch strings.ToLower(n.Value) {
		case "arg":
			if !inStage { // a stage's own ARGs do not reach FROM lines
				if err := r.arg(n, args); err != nil {
					return r, err
				}
			}
		case "from":
			inStage = true
			if err := r.from(n); err != nil {
				return r, err
			}
		}
	}
	// Flags name stages anywhere in the file (a later one is the
	// frontend's error, not an image), so they are read once all are known.
	for _, n := range res.AST.Children {
		if err := r.flags(n); err != nil {
			return r, err
		}
	}
	return r, nil
}

// frontendArgs are the args j's FROM lines see: the Dockerfile
// frontend's built-in ones (the platforms, TARGETSTAGE: declared or not),
// then the build's.
func frontendArgs(j job, args map[string]string) map[string]string {
	build := platforms.Normalize(platforms.DefaultSpec())
	target := build
	if p, err := platforms.Parse(j.platform); err == nil {
		target = platforms.Normalize(p)
	}
	out := map[string]string{
		"BUILDPLATFORM": platforms.Format(build), "BUILDOS": build.OS, "BUILDOSVERSION": build.OSVersion,
		"BUILDARCH": build.Architecture, "BUILDVARIANT": build.Variant,
		"TARGETPLATFORM": platforms.FormatAll(target), "TARGETOS": target.OS, "TARGETOSVERSION": target.OSVersion,
		"TARGETARCH": target.Architecture, "TARGETVARIANT": target.Variant,
		"TARGETSTAGE": cmp.Or(j.build.Target, "default"),
	}
	maps.Copy(out, args)
	return out
}

// builtinArgs are the args every FROM line sees without an ARG line.
var builtinArgs = []string{"BUILDPLATFORM", "BUILDOS", "BUILDOSVERSION", "BUILDARCH", "BUILDVARIANT",
	"TARGETPLATFORM", "TARGETOS", "TARGETOSVERSION", "TARGETARCH", "TARGETVARIANT", "TARGETSTAGE"}

type imageReader struct {
	lex    *shell.Lex
	meta   map[string]string // the ARGs before the first FROM
	stages map[string]bool   // stage names, lowercased
	seen   map[string]bool
	out    []string
	cache  bool // a RUN mounts a cache
}

func (r *imageReader) add(ref string) {
	if ref != "" && !strings.EqualFold(ref, "scratch") && !r.stages[strings.ToLower(ref)] && !r.seen[ref] {
		r.seen[ref] = true
		r.out = append(r.out, ref)
	}
}

func (r *imageReader) arg(n *parser.Node, args map[string]string) error {
	for a := n.Next; a != nil; a = a.Next {
		name, def, hasDef := strings.Cut(a.Value, "=")
		if v, ok := args[name]; ok {
			r.meta[name] = v
		} else if hasDef {
			v, _, err := r.lex.ProcessWord(def, envOf(r.meta))
			if err != nil {
				return fmt.Errorf("dockerfile line %d: ARG %s: %w", n.StartLine, name, err)
			}
			r.meta[name] = v
		}
	}
	return nil
}

func (r *imageReader) from(n *parser.Node) error {
	if n.Next == nil {
		return fmt.Errorf("dockerfile line %d: FROM needs an image", n.StartLine)
	}
	base, _, err := r.lex.ProcessWord(n.Next.Value, envOf(r.meta))
	if err != nil {
		return fmt.Errorf("dockerfile line %d: FROM %s: %w", n.StartLine, n.Next.Value, err)
	}
	r.add(base)
	if as := n.Next.Next; as != nil && strings.EqualFold(as.Value, "as") && as.Next != nil {
		r.stages[strings.ToLower(as.Next.Value)] = true
	}
	return nil
}

// flags reads the images an instruction's flags name (COPY --from, RUN
// --mount from=) and its cache mounts, and those of an ONBUILD's
// instruction.
func (r *imageReader) flags(n *parser.Node) error {
	switch strings.ToLower(n.Value) {
	case "onbuild":
		if n.Next != nil {
			for _, c := range n.Next.Children {
				if err := r.flags(c); err != nil {
					return err
				}
			}
		}
	case "copy":
		for _, f := range n.Flags {
			if v, ok := cutFlag(f, "from"); ok {
				r.addFrom(v)
			}
		}
	case "run":
		for _, f := range n.Flags {
			v, ok := cutFlag(f, "mount")
			if !ok {
				continue
			}
			fields, err := csv.NewReader(strings.NewReader(v)).Read()
			if err != nil {
				return fmt.Errorf("dockerfile line %d: --mount=%s: %w", n.StartLine, v, err)
			}
			for _, field := range fields {
				k, v, _ := strings.Cut(field, "=")
				switch strings.ToLower(k) {
				case "from":
					r.addFrom(v)
				case "type": // a variable may say cache
					r.cache = r.cache || strings.EqualFold(v, "cache") || strings.Contains(v, "$")
				}
			}
		}
	}
	return nil
}

// addFrom adds what a --from or from= names, unless it is a stage's index.
func (r *imageReader) addFrom(v string) {
	if _, err := strconv.Atoi(v); err != nil {
		r.add(v)
	}
}

// cutFlag is the value of flag --name=VALUE (the frontend reads flag
// names as written, in lower case).
func cutFlag(f, name string) (string, bool) {
	return strings.CutPrefix(f, "--"+name+"=")
}

type envMap map[string]string

func envOf(m map[string]string) shell.EnvGetter { return envMap(m) }

func (e envMap) Get(k string) (string, bool) { v, ok := e[k]; return v, ok }

func (e envMap) Keys() []string { return slices.Sorted(maps.Keys(e)) }
