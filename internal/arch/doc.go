// Package arch holds the project's layout and test-tier rules, as tests: which side
// (host, VM, wire) may link what, which packages may start processes, and which test
// files belong to which tier. It has no code of its own; nothing links it.
package arch
