package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

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
