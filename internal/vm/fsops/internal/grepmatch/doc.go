// Package grepmatch searches file contents as ripgrep 13 does: a pattern compiled from
// rxsyntax's HIR (Go's regexp where it is exact, else its own VM), prefiltered by the
// literals and bytes every match needs (with an AVX2 pair search on amd64), and files
// loaded and cut as ripgrep's searcher does (BOM, binary detection, mmap when large).
//
// It knows patterns, bytes and lines, nothing of walking trees or of pi's output; it
// imports only rxsyntax and fileio of this module.
package grepmatch
