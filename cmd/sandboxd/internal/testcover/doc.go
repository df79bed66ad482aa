// Package testcover answers which tests of a Go package run a given line
// of it, from per-test coverage: the package's test binary is built once
// with coverage on, then run once per test, and a test covers the blocks
// its profile counts as executed (count > 0), not every block the
// profile lists.
//
// What is computed is cached per package directory until one of its .go
// files changes (by content hash), since it costs one test run per
// test.
package testcover
