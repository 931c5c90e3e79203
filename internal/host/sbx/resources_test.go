package sbx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResources(t *testing.T) {
	tests := []struct {
		r    Resources
		args []string
		err  string
	}{
		{Resources{}, nil, ""},
		{Resources{CPUs: "4", Memory: "8g", Template: "docker/sandbox-templates:shell"},
			[]string{"--cpus", "4", "--memory", "8g", "--template", "docker/sandbox-templates:shell"}, ""},
		{Resources{CPUs: "0"}, []string{"--cpus", "0"}, ""},
		{Resources{Memory: "512MiB"}, []string{"--memory", "512MiB"}, ""},
		{Resources{Memory: "1073741824"}, []string{"--memory", "1073741824"}, ""},
		{Resources{CPUs: "-1"}, nil, "DOCKER_SANDBOX_CPUS=\"-1\": want a whole number"},
		{Resources{CPUs: "1.5"}, nil, "whole number"},
		{Resources{Memory: "256m"}, nil, "minimum is 512 MiB"},
		{Resources{Memory: "lots"}, nil, "512m"},
		{Resources{Memory: "--rm"}, nil, "512m"},
		{Resources{Template: "--privileged"}, nil, "image reference"},
		{Resources{Template: "a b"}, nil, "image reference"},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%+v", tt.r)
			continue
		}
		require.NoError(t, err, "%+v", tt.r)
		assert.Equal(t, tt.args, tt.r.Args(), "%+v", tt.r)
	}
}
