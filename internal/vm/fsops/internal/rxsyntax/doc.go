// Package rxsyntax is ripgrep 13's regex dialect (Rust's regex-syntax 0.6): it parses a
// pattern as ripgrep does, with ripgrep's error messages, and translates it to an HIR
// (Hir) that a matcher runs or that GoSyntax spells in Go's regexp syntax. Its Unicode
// tables (tables.go) are generated from regex-syntax's own by gen.go.
//
// It knows the syntax and its Unicode classes, nothing of files or of grep; it imports
// no other package of this module.
package rxsyntax
