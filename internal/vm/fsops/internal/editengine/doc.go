// Package editengine is pi's edit applied to one file's text: each oldText found
// exactly, else after pi's fuzzy normalization (trailing blanks, quotes, dashes,
// Unicode spaces), unique and not overlapping; the replacements spliced into the text
// as a stream of pieces (the file is held once, however large); pi's diff and unified
// patch (jsdiff's algorithm); and the result written back with the file's BOM and its
// own line endings.
//
// It knows text, edits and diffs, nothing of paths, locks or pi's tool messages; it
// imports only fileio (for the write) of this module.
package editengine
