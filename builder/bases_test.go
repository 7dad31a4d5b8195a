package builder

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/cornus-dev/cornus/spec"
)

// TestImagesRead: every image a Dockerfile reads, as the frontend
// resolves them (FROM with meta ARGs' defaults and overrides, COPY
// --from, RUN --mount from=, ONBUILD triggers; stage names, indexes and
// scratch left out), is what an offline builder is handed from the
// backend's store and what a server checks is the tenant's (issue 24).
func TestImagesRead(t *testing.T) {
	for _, c := range []struct {
		name, df string
		args     map[string]string
		want     []string
	}{
		{"plain", "FROM alpine:3\nRUN true\n", nil, []string{"alpine:3"}},
		{"platform flag", "FROM --platform=linux/amd64 busybox AS b\n", nil, []string{"busybox"}},
		{"stages and scratch", "FROM golang:1 AS build\nRUN go build\nFROM scratch\nCOPY --from=build /x /x\nFROM build AS again\n", nil, []string{"golang:1"}},
		{"meta args", "ARG BASE=debian\nARG TAG=12\nFROM ${BASE}:${TAG}\n", map[string]string{"TAG": "13"}, []string{"debian:13"}},
		{"stage args do not reach FROM", "FROM a\nARG X=b\nFROM $X\n", nil, []string{"a"}},
		{"unset arg", "ARG B\nFROM img${B}\n", nil, []string{"img"}},
		{"twice", "FROM a\nFROM a\n", nil, []string{"a"}},
		{"escape directive", "# escape=`\nFROM a\n", nil, []string{"a"}},
		{"COPY --from an image", "FROM a AS s\nCOPY --from=s /x /x\nCOPY --chown=1 --from=other/img:2 /y /y\nCOPY --from=0 /z /z\n", nil, []string{"a", "other/img:2"}},
		{"a stage named later is not an image", "FROM a\nCOPY --from=later /x /x\nFROM b AS later\n", nil, []string{"a", "b"}},
		{"RUN --mount from", "FROM a\nRUN --mount=type=bind,FROM=m1,target=/m --mount=type=cache,target=/c --mount=\"type=cache,from=m2\",target=/d true\n", nil, []string{"a", "m1", "m2"}},
		{"ONBUILD triggers", "FROM a\nONBUILD COPY --from=t1 /x /x\nONBUILD RUN --mount=from=t2,target=/t true\n", nil, []string{"a", "t1", "t2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := imagesRead([]byte(c.df), c.args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	// The frontend's built-in args need no ARG line in a FROM.
	got, err := imagesRead([]byte("FROM ${TARGETARCH:+victim/app}\nFROM img-$TARGETSTAGE\n"), frontendArgs(job{build: spec.Build{Target: "t"}}, nil))
	if err != nil || !slices.Equal(got, []string{"victim/app", "img-t"}) {
		t.Fatalf("built-in args: got %q, %v", got, err)
	}
	if _, err := imagesRead([]byte("FROM\n"), nil); err == nil {
		t.Fatal("FROM without an image: want an error")
	}
}

// FuzzDockerfile: no Dockerfile makes cornus's own readings of it panic
// (its bases, the context paths it reads, its stages and their users).
func FuzzDockerfile(f *testing.F) {
	f.Add("ARG A=x\nFROM $A AS s\nFROM s\n")
	f.Add("FROM ${A:-b}\n")
	f.Add("FROM x AS a\nUSER u\nCOPY --from=a /x /y\nCOPY [\"a b\", \"/d/\"]\nRUN --mount=type=bind,source=t,target=/t true\n")
	f.Fuzz(func(t *testing.T, df string) {
		_, _ = imagesRead([]byte(df), map[string]string{"A": "c"})
		_, _, _ = contextPaths([]byte(df))
		if res, err := parser.Parse(strings.NewReader(df)); err == nil {
			if st, err := parseStages(res, nil); err == nil {
				_, _ = st.find("a")
				_ = st.user(context.Background(), len(st.stages)-1, nil)
			}
		}
	})
}
