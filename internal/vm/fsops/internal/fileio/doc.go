// Package fileio holds the file-system primitives pi's tools are built on: Node-worded
// errors, access checks, atomic and in-place writes (with the names of their temporary
// files, which listings hide), unnamed files, inode locks, and directory handles that
// are listed with getdents and open their files relative to themselves.
//
// It knows file systems and Node's error texts, nothing of the tools; it imports no
// other package of this module.
package fileio
