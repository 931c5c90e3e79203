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
// removes afterwards (run), or its own environment, named by --build-arg NAME (build).

// envFileFlag is the argument valuesScript replaces with --env-file=<the file>.
const envFileFlag = "--env-file=@"

// valuesScript reads KEY=VALUE lines on stdin. With an envFileFlag argument it writes them
// to a private temporary file and passes that; otherwise it exports them (resolving the
// command first, so a value named PATH cannot change which docker runs). Then it runs
// its arguments.
const valuesScript = `set -e
cmd=$(command -v "$1"); shift
f=$(mktemp)
trap 'rm -f "$f"' EXIT
cat > "$f"
file=no
for a do
	shift
	if [ "$a" = "` + envFileFlag + `" ]; then a="--env-file=$f"; file=yes; fi
	set -- "$@" "$a"
done
if [ $file = no ]; then
	while IFS= read -r kv; do export "$kv"; done < "$f"
fi
set +e
"$cmd" "$@"
exit $?`

// dockerWithValues runs docker ARGS in the sandbox with values (KEY=VALUE, no newlines)
// delivered on stdin; ARGS name them only (envFileFlag, or --build-arg=NAME).
func (d *Deployer) dockerWithValues(ctx context.Context, timeout time.Duration, values []string, args ...string) (out, error) {
	if len(values) == 0 {
		return d.docker(ctx, timeout, args...)
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return out{}, err
	}
	argv := append([]string{"sh", "-c", valuesScript, "pi-sbx-values"}, append(d.dockerPrefix(), args...)...)
	return d.execIn(ctx, d.Sbx, name, timeout, nil, []byte(strings.Join(values, "\n")+"\n"), argv...)
}
