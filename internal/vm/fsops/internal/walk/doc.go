// Package walk lists directory trees as ripgrep and fd do for pi's grep and find: in
// parallel, in their order, honouring .gitignore, .ignore, .rgignore and .fdignore (and
// the global git and fd ignore files) with git's rules, skipping the write tools' own
// temporary files; and it compiles the globs pi passes (fd's --glob, ripgrep's --glob).
//
// It knows file names, ignore rules and globs, nothing of file contents or of pi's
// output; it imports only fileio of this module.
package walk
