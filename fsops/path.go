package fsops

import (
	"net/url"
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
// become paths.
func ExpandPath(p string) string {
	p = unicodeSpaces.Replace(p)
	p = strings.TrimPrefix(p, "@")
	switch {
	case p == "~":
		return homeDir()
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(homeDir(), p[2:])
	case strings.HasPrefix(p, "file://"):
		if u, err := url.Parse(p); err == nil && u.Path != "" {
			return u.Path
		}
	}
	return p
}

// ResolveToCwd is pi's resolveToCwd: the expanded path, made absolute against cwd and
// cleaned (like Node's path.resolve).
func ResolveToCwd(p, cwd string) string {
	p = ExpandPath(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}
