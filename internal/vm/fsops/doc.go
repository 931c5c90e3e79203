// Package fsops implements pi 1.6.0's file tools — read, write, edit, grep, find, ls —
// as plain Go functions: a working directory and arguments in, pi's exact result out.
// It knows nothing of sandboxes or protocols; a returned error is what pi would throw.
//
// This package is the tools' arguments, pi's messages and notices, and the glue; the
// machinery is in fsops/internal: rxsyntax (ripgrep's regex dialect), grepmatch
// (searching file contents), walk (trees, ignore files, globs), editengine (edit's
// matching, diff and write-back), image (read's images) and fileio (the file-system
// primitives). Of this module it imports only those and pi/{js,result,truncate}.
package fsops
