package fsops

import (
	"errors"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Node's messages for the file:// URLs fileURLToPath refuses, as pi's tools throw them.
var (
	errInvalidURL     = errors.New("Invalid URL")
	errURIMalformed   = errors.New("URI malformed")
	errEncodedSlash   = errors.New("File URL path must not include encoded / characters")
	errFileURLHost    = errors.New(`File URL host must be "localhost" or empty on ` + runtime.GOOS)
	forbiddenHostChar = "\x00\t\n\r #/:<>?@[\\]^|%\x7f"
)

// fileURLToPath is Node's url.fileURLToPath on POSIX for a string starting "file://", as
// far as a path can tell: the WHATWG parser's view of it (tabs and newlines dropped,
// backslashes as slashes, query and fragment cut off, a host that is empty or localhost
// — percent-decoded, any case — and nothing else, a Windows drive letter in the host
// place taken as the path's first segment), then the pathname decoded as
// decodeURIComponent decodes it. Dot segments are left to the caller's path cleaning,
// which resolves them the same way.
func fileURLToPath(u string) (string, error) {
	u = strings.Trim(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
	rest := strings.ReplaceAll(strings.TrimPrefix(u, "file://"), `\`, "/")
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	host, path := rest, "/"
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	switch {
	case isDriveLetter(host):
		path = "/" + host[:1] + ":" + path
	case host == "":
	case strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]"):
		return "", errFileURLHost // an IPv6 literal: a host, and not localhost
	default:
		decoded, ok := percentDecode(host)
		if !ok || !utf8.ValidString(decoded) || strings.ContainsAny(decoded, forbiddenHostChar) || hasC0(decoded) {
			return "", errInvalidURL
		}
		if strings.ToLower(decoded) != "localhost" {
			return "", errFileURLHost
		}
	}
	if strings.Contains(strings.ToLower(path), "%2f") {
		return "", errEncodedSlash
	}
	decoded, ok := percentDecode(path)
	if !ok || !utf8.ValidString(decoded) {
		return "", errURIMalformed
	}
	return decoded, nil
}

// isDriveLetter is the URL standard's Windows drive letter: an ASCII letter, then ':' or '|'.
func isDriveLetter(s string) bool {
	return len(s) == 2 && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') && (s[1] == ':' || s[1] == '|')
}

func hasC0(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// percentDecode decodes every %XX; false when a '%' is not followed by two hex digits
// (decodeURIComponent's URIError).
func percentDecode(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
			return "", false
		}
		b.WriteByte(byte(unhex(s[i+1])<<4 | unhex(s[i+2])))
		i += 2
	}
	return b.String(), true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}
