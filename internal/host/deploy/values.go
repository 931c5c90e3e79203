package deploy

import (
	"context"
	"strings"
	"time"
)

// No value a model hands over for a container (docker_run's env, docker_build's build
// args) may appear in any process's argv: /proc/*/cmdline is world-readable, on the host
// (the sbx client) and in the VM (the docker CLI). Values travel on stdin instead, to a
// small script in the sandbox that puts them where docker reads them: an env file it
// removes afterwards (run), or the docker CLI's environment, named by --build-arg NAME
// (build). The second is why a build arg may not bear a name the CLI itself reads
// (cliReads).

// envFileFlag is the argument dockerWithValues replaces with --env-file=<the file>.
const envFileFlag = "--env-file=@"

// valuesScript writes stdin (KEY=VALUE lines) to the new private file "$1", which must
// not exist (noclobber: nothing planted there is followed); with "$2" = export it
// exports the lines. Then it runs the rest, the command resolved first so that a value
// named PATH cannot change which docker runs. Linear in the number of values.
const valuesScript = `set -e
f=$1 mode=$2; shift 2
cmd=$(command -v "$1"); shift
umask 077
trap 'rm -f "$f"' EXIT
set -C
cat > "$f"
set +C
if [ "$mode" = export ]; then
	while IFS= read -r kv; do export "$kv"; done < "$f"
fi
set +e
"$cmd" "$@"
exit $?`

// dockerWithValues runs docker ARGS in the sandbox with values (KEY=VALUE, no newlines)
// delivered on stdin; ARGS name them only (envFileFlag for an env file, else
// --build-arg=NAME, and the values are exported).
func (d *Deployer) dockerWithValues(ctx context.Context, timeout time.Duration, values []string, args ...string) (out, error) {
	if len(values) == 0 {
		return d.docker(ctx, timeout, args...)
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return out{}, err
	}
	file := "/tmp/pi-sbx-values-" + strings.ToLower(nonce())
	mode := "export"
	args = append([]string{}, args...)
	for i, a := range args {
		if a == envFileFlag {
			args[i], mode = "--env-file="+file, "file"
		}
	}
	argv := append([]string{"sh", "-c", valuesScript, "pi-sbx-values", file, mode}, append(d.dockerPrefix(), args...)...)
	return d.execIn(ctx, d.Sbx, name, timeout, nil, []byte(strings.Join(values, "\n")+"\n"), argv...)
}

// MaxBuildArgs caps docker_build's build args, MaxValueBytes all values of one call.
const (
	MaxBuildArgs  = 1000
	MaxValueBytes = 1 << 20
)

// cliReads reports whether the docker CLI (or the Go runtime it runs on) reads variable
// k: as a build arg it would become the CLI's own environment — DOCKER_CONFIG or HOME
// naming a workspace config whose plugin then runs in the sandbox outside any container,
// PATH choosing its helpers, BUILDKIT_/BUILDX_ its builder, OTEL_ where it reports.
func cliReads(k string) bool {
	for _, p := range []string{"DOCKER_", "BUILDKIT_", "BUILDX_", "COMPOSE_", "OTEL_", "LD_", "XDG_", "GIT_"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	switch k {
	case "HOME", "PATH", "TMPDIR", "SHELL", "USER", "LOGNAME", "PWD", "IFS", "ENV", "CDPATH",
		"GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK", "SSL_CERT_FILE", "SSL_CERT_DIR",
		"NOTARY_SERVER":
		return true
	}
	return false
}
