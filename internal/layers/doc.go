// Package layers holds the project's dependency rules and the test that
// enforces them: which of our packages may import which, that the core
// module depends on nothing of PromptKit, and that test harnesses stay
// out of what we ship. The rules are written once, in rules.go; the
// package has no other code (docs/architecture.md explains the layers).
package layers
