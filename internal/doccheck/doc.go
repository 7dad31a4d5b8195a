// Package doccheck holds a test that keeps the docs honest: every test
// or fuzz target a page under docs/ (or the README) cites by name exists.
package doccheck
