package builder

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// TestBaseImages: the images a Dockerfile starts FROM, as the frontend
// resolves them (meta ARGs with defaults and overrides, stage names and
// scratch left out), are what an offline builder is handed from the
// backend's store (issue 24, offline bases).
func TestBaseImages(t *testing.T) {
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
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := baseImages([]byte(c.df), c.args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	if _, err := baseImages([]byte("FROM\n"), nil); err == nil {
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
		_, _ = baseImages([]byte(df), map[string]string{"A": "c"})
		_, _, _ = contextPaths([]byte(df))
		if res, err := parser.Parse(strings.NewReader(df)); err == nil {
			if st, err := parseStages(res, nil); err == nil {
				_, _ = st.find("a")
				_ = st.user(context.Background(), len(st.stages)-1, nil)
			}
		}
	})
}
