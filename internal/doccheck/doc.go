// Package doccheck holds tests that keep the docs honest: every test or
// fuzz target a page under docs/ (or the README) cites by name exists
// (TestCitedTestsExist), and docs/variables.md has a row for exactly the
// CORNUS_* variables the Go sources spell in string literals
// (TestVariablesTableMatchesCode). It has no code of its own.
package doccheck
