//go:build !linux

package main

// localCommands: none outside linux (see commands_linux.go).
func localCommands() []command { return nil }
