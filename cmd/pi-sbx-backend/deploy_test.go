package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGCHours(t *testing.T) {
	for env, want := range map[string]float64{"": 24, "DOCKER_SANDBOX_GC_HOURS=0": 0, "DOCKER_SANDBOX_GC_HOURS=1.5": 1.5, "DOCKER_SANDBOX_GC_HOURS= 48 ": 48} {
		got, err := gcHours([]string{env})
		require.NoError(t, err, env)
		assert.Equal(t, want, got, env)
	}
	for _, bad := range []string{"DOCKER_SANDBOX_GC_HOURS=-1", "DOCKER_SANDBOX_GC_HOURS=soon", "DOCKER_SANDBOX_GC_HOURS=99999"} {
		_, err := gcHours([]string{bad})
		var ue usageError
		assert.ErrorAs(t, err, &ue, bad)
	}
}

func TestGCAndVerifyCommandLines(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), stdio{strings.NewReader(""), &out, &errOut}, []string{"gc", "--hours", "-1"})
	assert.Equal(t, 2, code, errOut.String())
	assert.Contains(t, errOut.String(), "--hours -1")
	errOut.Reset()
	code = run(context.Background(), stdio{strings.NewReader(""), &out, &errOut}, []string{"verify", "extra"})
	assert.Equal(t, 2, code, errOut.String())
	out.Reset()
	code = run(context.Background(), stdio{strings.NewReader(""), &out, &errOut}, []string{"help", "gc"})
	assert.Equal(t, 0, code)
	assert.Contains(t, out.String(), "--dry-run")
	assert.Contains(t, out.String(), "DOCKER_SANDBOX_GC_HOURS")
}
