package deploy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuildArgNamesTheCLIReadsAreRefused: a build arg is the docker CLI's own environment
// variable in the sandbox (its value is exported there, to stay out of argv), so names
// the CLI or its runtime read are refused; others pass, in sorted order, values apart.
func TestBuildArgNamesTheCLIReadsAreRefused(t *testing.T) {
	ws, _ := confineFixture(t)
	d := &Deployer{Config: Config{Workspace: ws}}
	for _, name := range []string{"DOCKER_CONFIG", "DOCKER_HOST", "HOME", "PATH", "BUILDKIT_PROGRESS", "BUILDX_BUILDER", "COMPOSE_FILE", "LD_PRELOAD", "XDG_CONFIG_HOME", "GODEBUG", "OTEL_EXPORTER_OTLP_ENDPOINT", "TMPDIR", "SSL_CERT_FILE"} {
		_, _, _, _, err := d.buildArgv(buildArgs{Context: "app", Tag: "a:1", BuildArgs: `{"` + name + `":"x"}`})
		require.ErrorIs(t, err, ErrRefused, name)
		assert.Contains(t, err.Error(), "build arg "+name+": the docker CLI reads this variable", name)
	}
	_, _, argv, values, err := d.buildArgv(buildArgs{Context: "app", Tag: "a:1", BuildArgs: `{"VERSION":"1.2","GOPROXY":"off","N":3}`})
	require.NoError(t, err)
	assert.Equal(t, "build --tag=a:1 --label=com.pi.sandbox=true --build-arg=GOPROXY --build-arg=N --build-arg=VERSION", strings.Join(argv, " "))
	assert.Equal(t, []string{"GOPROXY=off", "N=3", "VERSION=1.2"}, values)
}

// TestBuildArgsAreCapped: 50,000 build args (which ran for ten minutes in the script
// that rebuilt its argument list once per argument) are refused at once; the cap itself
// passes.
func TestBuildArgsAreCapped(t *testing.T) {
	ws, _ := confineFixture(t)
	d := &Deployer{Config: Config{Workspace: ws}}
	for _, n := range []int{MaxBuildArgs, MaxBuildArgs + 1, 50000} {
		m := map[string]string{}
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("A%d", i)] = "v"
		}
		raw, err := json.Marshal(m)
		require.NoError(t, err)
		_, _, argv, values, err := d.buildArgv(buildArgs{Context: "app", Tag: "a:1", BuildArgs: string(raw)})
		if n <= MaxBuildArgs {
			require.NoError(t, err)
			assert.Len(t, values, n)
			assert.Len(t, argv, 3+n)
			continue
		}
		require.ErrorIs(t, err, ErrRefused)
		assert.Contains(t, err.Error(), "the limit is")
	}
}
