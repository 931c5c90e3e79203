package fsops

import (
	"os"
	"path/filepath"
	"strings"
)

// unicodeSpaces are the characters pi's path expansion turns into a plain space.
var unicodeSpaces = strings.NewReplacer(
	"\u00A0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ",
	"\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ",
	"\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// ExpandPath applies pi's expansion (path-utils.ts): Unicode spaces become spaces, one
// leading "@" is dropped, "~" and "~/…" go to the home directory, and file:// URLs
// become paths as Node's fileURLToPath makes them, with its errors.
func ExpandPath(p string) (string, error) {
	p = unicodeSpaces.Replace(p)
	p = strings.TrimPrefix(p, "@")
	switch {
	case p == "~":
		return homeDir(), nil
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(homeDir(), p[2:]), nil
	case strings.HasPrefix(p, "file://"):
		return fileURLToPath(p)
	}
	return p, nil
}

// ResolveToCwd is pi's resolveToCwd: the expanded path, made absolute against cwd and
// cleaned (like Node's path.resolve).
func ResolveToCwd(p, cwd string) (string, error) {
	p, err := ExpandPath(p)
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(cwd, p), nil
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}
