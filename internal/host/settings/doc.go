package settings

import (
	"fmt"
	"strings"
)

//go:generate go test -run TestSettingsDoc -update

// Markdown is docs/settings.md: the table of every variable, generated from the code.
func Markdown() string {
	var b strings.Builder
	b.WriteString(`# Settings

<!-- Generated from internal/host/settings (table.go): edit the code, then run
     go generate ./internal/host/settings -->

pi-sbx-backend reads its settings once, from its own environment, when a command starts;
a value it cannot use stops the command with one line naming the variable and the value.
An empty value is the same as unset. A yes/no setting takes 1, true, yes or on, and 0,
false, no or off. Flags of a command (serve --tools, --details) win over the variables.
` + "`pi-sbx-backend help settings`" + ` prints this table.

These are settings of the program on the host. What reaches the sandbox is another
matter: pi's PI_* variables (not PI_SBX_*) and the names DOCKER_SANDBOX_ENV_ALLOWLIST
lists, passed by name; no DOCKER_* or COMPOSE_* variable ever reaches sbx or the sandbox.

| Variable | Type | Default | Meaning |
|---|---|---|---|
`)
	for _, v := range table {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", v.Name, cell(v.Type), cell(v.Default), cell(v.Meaning))
	}
	b.WriteString("\nNo longer read (set, they stop the command with what to use instead):\n\n")
	for _, r := range removed {
		fmt.Fprintf(&b, "- `%s`: %s\n", r.name, cell(r.instead))
	}
	return b.String()
}

// cell escapes what would end a Markdown table cell; an empty one reads "—".
func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
