package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionOf(t *testing.T) {
	mod := func(v string) *debug.BuildInfo { return &debug.BuildInfo{Main: debug.Module{Version: v}} }
	tests := []struct {
		name, set string
		bi        *debug.BuildInfo
		want      string
	}{
		{"a release stamps it with -X", "1.2.3", mod("v9.9.9"), "1.2.3"},
		{"go install …@v1.2.3", "dev", mod("v1.2.3"), "1.2.3"},
		{"a build in a checkout", "dev", mod("(devel)"), "dev"},
		{"no build info", "dev", nil, "dev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, versionOf(tc.set, tc.bi))
		})
	}
}
