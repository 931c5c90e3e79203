package vmagent

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// workdir resolves a command's working directory: dir when absolute, else under cwd
// (cwd itself when dir is empty).
func workdir(cwd, dir string) string {
	switch {
	case dir == "":
		return cwd
	case filepath.IsAbs(dir):
		return dir
	default:
		return filepath.Join(cwd, dir)
	}
}

// appendVars appends a call's own variables to vars in name order (so the environment
// does not depend on map order), refusing names a process environment cannot hold.
func appendVars(vars []string, env map[string]string) ([]string, error) {
	keys := make([]string, 0, len(env))
	for k := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("env: invalid variable name %q", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vars = append(vars, k+"="+env[k])
	}
	return vars, nil
}
