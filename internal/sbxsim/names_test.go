//go:build linux

package sbxsim

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"ab", true},
		{"pi-sbx-123-abc", true},
		{"a.b-C9", true},
		{strings.Repeat("a", 63), true},
		{"a", false},
		{strings.Repeat("a", 64), false},
		{"a_b", false},
		{"a+b", false},
		{"-ab", false},
		{"ab.", false},
		{"default", false},
		{"", false},
	}
	for _, tt := range tests {
		if err := validateName(tt.name); (err == nil) != tt.ok {
			t.Errorf("validateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestDefaultName(t *testing.T) {
	tests := []struct{ agent, path, want string }{
		{"shell", "/home/u/proj", "shell-proj"},
		{"claude", "/x/My_Project!", "claude-My-Project"},
		{"shell", "", "shell"},
		{"shell", "/x/" + strings.Repeat("b", 80), "shell-" + strings.Repeat("b", 57)},
	}
	for _, tt := range tests {
		got := defaultName(tt.agent, tt.path)
		if got != tt.want {
			t.Errorf("defaultName(%q, %q) = %q, want %q", tt.agent, tt.path, got, tt.want)
		}
		if err := validateName(got); err != nil {
			t.Errorf("default name %q is invalid: %v", got, err)
		}
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"512m", 512 << 20}, {"4g", 4 << 30}, {"2GiB", 2 << 30}, {"1024MB", 1 << 30}, {"1073741824", 1 << 30},
		{"100m", 0}, {"lots", 0}, {"-1g", 0},
	}
	for _, tt := range tests {
		got, err := parseMemory(tt.in)
		if (err == nil) != (tt.want != 0) || got != tt.want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}
