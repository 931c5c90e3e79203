// Package fsops implements pi 1.6.0's file tools — read, write, edit, grep, find, ls —
// as plain Go functions: a working directory and arguments in, pi's exact result out.
// It knows nothing of sandboxes or protocols; a returned error is what pi would throw.
package fsops
