//go:build linux

package sbxsim

import "testing"

func TestParsePortSpec(t *testing.T) {
	tests := []struct {
		spec string
		want Port
		bad  bool
	}{
		{spec: "3000", want: Port{HostIP: "127.0.0.1", SandboxPort: 3000, Protocol: "tcp4", Ephemeral: true}},
		{spec: "8080:3000", want: Port{HostIP: "127.0.0.1", HostPort: 8080, SandboxPort: 3000, Protocol: "tcp4"}},
		{spec: "127.0.0.1:8080:3000/tcp", want: Port{HostIP: "127.0.0.1", HostPort: 8080, SandboxPort: 3000, Protocol: "tcp"}},
		{spec: "[::1]:8080:3000", want: Port{HostIP: "::1", HostPort: 8080, SandboxPort: 3000, Protocol: "tcp6"}},
		{spec: "3000/tcp6", want: Port{HostIP: "::1", SandboxPort: 3000, Protocol: "tcp6", Ephemeral: true}},
		{spec: "0", bad: true},
		{spec: "70000", bad: true},
		{spec: "3000/udp", bad: true},
		{spec: "3000/sctp", bad: true},
		{spec: "a:b:c:d", bad: true},
		{spec: "nope:80:80", bad: true},
	}
	for _, tt := range tests {
		got, err := parsePortSpec(tt.spec)
		if tt.bad {
			if err == nil {
				t.Errorf("parsePortSpec(%q) = %+v, want an error", tt.spec, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parsePortSpec(%q) = %+v, %v; want %+v", tt.spec, got, err, tt.want)
		}
	}
}

func TestMatchesUnpublish(t *testing.T) {
	p := Port{HostIP: "127.0.0.1", HostPort: 8080, SandboxPort: 3000, Protocol: "tcp4"}
	tests := []struct {
		spec string
		want bool
	}{
		{"3000", true},
		{"3001", false},
		{"8080:3000", true},
		{"8081:3000", false},
		{"127.0.0.1:8080:3000", true},
		{"127.0.0.2:8080:3000", false},
		{"8080:3000/tcp4", true},
		{"8080:3000/tcp6", false},
	}
	for _, tt := range tests {
		got, err := matchesUnpublish(p, tt.spec)
		if err != nil || got != tt.want {
			t.Errorf("matchesUnpublish(%q) = %v, %v; want %v", tt.spec, got, err, tt.want)
		}
	}
}
