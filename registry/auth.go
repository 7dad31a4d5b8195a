package registry

import (
	"context"
	"errors"
)

// Action is what a request does to a repository.
type Action int

// Actions, in the order a registry token's scope names them.
const (
	Pull Action = iota
	Push
	Delete
)

func (a Action) String() string {
	return [...]string{"pull", "push", "delete"}[a]
}

// Auth decides who a request is and what it may do. A denial is
// ErrDenied (403) or ErrNotFound (404: the repository is hidden).
type Auth interface {
	// Authenticate maps a request's credentials (the password of Basic,
	// or a Bearer token) to a principal; ok false answers 401.
	Authenticate(secret string) (principal string, ok bool)
	// Authorize checks principal may do a to repo.
	Authorize(ctx context.Context, principal, repo string, a Action) error
	// Visible reports whether principal sees repo in the catalog.
	Visible(ctx context.Context, principal, repo string) bool
}

// ErrDenied is an Authorize refusal.
var ErrDenied = errors.New("denied")

// Open is an Auth that lets anyone do anything: for tests and a
// registry on loopback only.
type Open struct{}

// Authenticate implements Auth.
func (Open) Authenticate(string) (string, bool) { return "", true }

// Authorize implements Auth.
func (Open) Authorize(context.Context, string, string, Action) error { return nil }

// Visible implements Auth.
func (Open) Visible(context.Context, string, string) bool { return true }
