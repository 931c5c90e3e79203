//go:build linux

package sbxsim

import (
	"fmt"
	"strings"
)

// flagSpec describes one command-line flag in the cobra style sbx uses: a long name, an
// optional one-letter short name, and whether it takes a value.
type flagSpec struct {
	long  string
	short string
	value bool
}

// flagSet is the result of parsing: values by long name (repeatable flags keep every
// value in order), and the positional arguments.
type flagSet struct {
	values map[string][]string
	args   []string
}

// has reports whether the flag was given at least once.
func (f flagSet) has(long string) bool { _, ok := f.values[long]; return ok }

// last returns the flag's last value, or "" when absent.
func (f flagSet) last(long string) string {
	v := f.values[long]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// parseFlags parses args against specs. With interspersed, flags may follow positional
// arguments (cobra's default); without it, the first positional argument ends the flags
// (docker exec style: everything after the sandbox name belongs to the command). A
// literal "--" always ends the flags and is dropped.
func parseFlags(specs []flagSpec, args []string, interspersed bool) (flagSet, error) {
	fs := flagSet{values: map[string][]string{}}
	byLong := map[string]flagSpec{}
	byShort := map[string]flagSpec{}
	for _, s := range specs {
		byLong[s.long] = s
		if s.short != "" {
			byShort[s.short] = s
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			fs.args = append(fs.args, args[i+1:]...)
			return fs, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			s, ok := byLong[name]
			if !ok {
				return fs, fmt.Errorf("unknown flag: --%s", name)
			}
			switch {
			case !s.value && hasVal:
				if val != "true" && val != "false" {
					return fs, fmt.Errorf("invalid argument %q for \"--%s\" flag", val, name)
				}
				if val == "true" {
					fs.values[name] = append(fs.values[name], "true")
				}
			case !s.value:
				fs.values[name] = append(fs.values[name], "true")
			case hasVal:
				fs.values[name] = append(fs.values[name], val)
			case i+1 < len(args):
				i++
				fs.values[name] = append(fs.values[name], args[i])
			default:
				return fs, fmt.Errorf("flag needs an argument: --%s", name)
			}
		case len(a) > 1 && a[0] == '-':
			// A cluster of short flags (-it), the last of which may take a value
			// attached (-eK=V) or as the next argument (-e K=V).
		cluster:
			for j := 1; j < len(a); j++ {
				s, ok := byShort[a[j:j+1]]
				if !ok {
					return fs, fmt.Errorf("unknown shorthand flag: '%c' in %s", a[j], a)
				}
				if !s.value {
					fs.values[s.long] = append(fs.values[s.long], "true")
					continue
				}
				rest := strings.TrimPrefix(a[j+1:], "=")
				switch {
				case rest != "":
					fs.values[s.long] = append(fs.values[s.long], rest)
				case i+1 < len(args):
					i++
					fs.values[s.long] = append(fs.values[s.long], args[i])
				default:
					return fs, fmt.Errorf("flag needs an argument: '%c' in %s", a[j], a)
				}
				break cluster
			}
		default:
			if !interspersed {
				fs.args = append(fs.args, args[i:]...)
				return fs, nil
			}
			fs.args = append(fs.args, a)
		}
	}
	return fs, nil
}
