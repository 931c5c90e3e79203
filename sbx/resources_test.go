package sbx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResourcesFromEnv(t *testing.T) {
	tests := []struct {
		env  []string
		args []string
		err  string
	}{
		{nil, nil, ""},
		{[]string{"DOCKER_SANDBOX_CPUS=4", "DOCKER_SANDBOX_MEMORY=8g", "DOCKER_SANDBOX_TEMPLATE=docker/sandbox-templates:shell"},
			[]string{"--cpus", "4", "--memory", "8g", "--template", "docker/sandbox-templates:shell"}, ""},
		{[]string{"DOCKER_SANDBOX_CPUS=0"}, []string{"--cpus", "0"}, ""},
		{[]string{"DOCKER_SANDBOX_MEMORY=512MiB"}, []string{"--memory", "512MiB"}, ""},
		{[]string{"DOCKER_SANDBOX_MEMORY=1073741824"}, []string{"--memory", "1073741824"}, ""},
		{[]string{"DOCKER_SANDBOX_CPUS=-1"}, nil, "whole number"},
		{[]string{"DOCKER_SANDBOX_CPUS=1.5"}, nil, "whole number"},
		{[]string{"DOCKER_SANDBOX_MEMORY=256m"}, nil, "minimum is 512 MiB"},
		{[]string{"DOCKER_SANDBOX_MEMORY=lots"}, nil, "512m"},
		{[]string{"DOCKER_SANDBOX_MEMORY=--rm"}, nil, "512m"},
		{[]string{"DOCKER_SANDBOX_TEMPLATE=--privileged"}, nil, "image reference"},
		{[]string{"DOCKER_SANDBOX_TEMPLATE=a b"}, nil, "image reference"},
	}
	for _, tt := range tests {
		r, err := ResourcesFromEnv(tt.env)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%v", tt.env)
			continue
		}
		require.NoError(t, err, "%v", tt.env)
		assert.Equal(t, tt.args, r.Args(), "%v", tt.env)
	}
}
