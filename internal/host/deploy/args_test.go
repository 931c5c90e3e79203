package deploy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunArgv(t *testing.T) {
	ws, _ := confineFixture(t)
	d := &Deployer{Config: Config{Workspace: ws}}
	no := false
	tests := []struct {
		name string
		args runArgs
		want string
		vals []string
		err  string
	}{
		{name: "minimal", args: runArgs{Image: "web:1"},
			want: "run --detach --label=com.pi.sandbox=true --restart=unless-stopped web:1"},
		{name: "everything", args: runArgs{Image: "web:1", Name: "web", Command: "httpd -f -p '8080'", Ports: []string{"8080", "9000:80/udp"},
			Env: []any{"A=1", "B=two words"}, Memory: "256m", Volumes: []string{"app:/srv:ro"}, Network: "bridge", Restart: "no", Workdir: "/srv"},
			want: "run --detach --name=web --publish=8080/tcp --publish=9000:80/udp --label=com.pi.sandbox=true --label=com.pi.sandbox.ports=8080/tcp,9000:80/udp " +
				"--memory=256m --volume=" + filepath.Join(ws, "app") + ":/srv:ro --network=bridge --restart=no --workdir=/srv --env-file=@ web:1 httpd -f -p 8080",
			vals: []string{"A=1", "B=two words"}},
		{name: "foreground rm", args: runArgs{Image: "busybox", Detach: &no, Rm: true, Command: []any{"echo", "a b"}},
			want: "run --rm --label=com.pi.sandbox=true busybox echo a b"},
		{name: "env as one string", args: runArgs{Image: "x", Env: "K=secret"}, want: "run --detach --label=com.pi.sandbox=true --restart=unless-stopped --env-file=@ x", vals: []string{"K=secret"}},
		{name: "rm with detach", args: runArgs{Image: "x", Rm: true}, err: "detach=false"},
		{name: "bad port", args: runArgs{Image: "x", Ports: []string{"70000"}}, err: "not a port"},
		{name: "ip in port", args: runArgs{Image: "x", Ports: []string{"0.0.0.0:80:80"}}, err: "want"},
		{name: "env without =", args: runArgs{Image: "x", Env: "NOPE"}, err: "KEY=VALUE"},
		{name: "env list of numbers", args: runArgs{Image: "x", Env: []any{1.0}}, err: "strings"},
		{name: "unterminated quote", args: runArgs{Image: "x", Command: "echo 'a"}, err: "unterminated"},
		{name: "image with a space", args: runArgs{Image: "a b"}, err: "not an image"},
		{name: "network", args: runArgs{Image: "x", Network: "container:other"}, err: "network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, vals, _, _, err := d.runArgv(tt.args)
			if tt.err != "" {
				require.ErrorIs(t, err, ErrRefused)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, strings.Join(argv, " "))
			assert.Equal(t, tt.vals, vals, "values travel apart from argv")
		})
	}
}

func TestSplitCommand(t *testing.T) {
	tests := map[string][]string{
		`echo hi`:               {"echo", "hi"},
		`  sh -c "echo $HOME" `: {"sh", "-c", "echo $HOME"},
		`a 'b c' "d 'e'" f\ g`:  {"a", "b c", "d 'e'", "f g"},
		`x '' y`:                {"x", "", "y"},
		`'it'\''s'`:             {"it's"},
		``:                      nil,
	}
	for in, want := range tests {
		got, err := splitCommand(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := splitCommand(`echo "a`)
	assert.Error(t, err)
}

func TestPorts(t *testing.T) {
	for in, want := range map[string]portSpec{
		"8080":    {container: 8080, proto: "tcp"},
		"3000:80": {host: 3000, container: 80, proto: "tcp"},
		"53/udp":  {container: 53, proto: "udp"},
		"1:2/tcp": {host: 1, container: 2, proto: "tcp"},
		"65535:1": {host: 65535, container: 1, proto: "tcp"},
	} {
		got, err := parsePort(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "0", "a", "80:", ":80", "80/sctp", "1:2:3", "65536", "-p", "80 "} {
		_, err := parsePort(bad)
		assert.ErrorIs(t, err, ErrRefused, bad)
	}
	assert.Equal(t, "8080/tcp", portSpec{container: 8080, proto: "tcp"}.dockerPublish())
	assert.Equal(t, "3000:80/udp", portSpec{host: 3000, container: 80, proto: "udp"}.dockerPublish())
	n, err := parseDockerPort("0.0.0.0:32768\n[::]:32768\n")
	require.NoError(t, err)
	assert.Equal(t, 32768, n)
	_, err = parseDockerPort("")
	assert.Error(t, err)
}

func TestOutputIsCapped(t *testing.T) {
	h := &headTail{max: 100}
	for i := 0; i < 100; i++ {
		h.Write([]byte(strings.Repeat(string(rune('a'+i%26)), 10)))
	}
	s := h.String()
	assert.True(t, strings.HasPrefix(s, strings.Repeat("a", 10)+strings.Repeat("b", 10)), s)
	assert.Contains(t, s, "[… 900 bytes of output omitted …]")
	assert.True(t, strings.HasSuffix(s, strings.Repeat("v", 10)), s)
	assert.LessOrEqual(t, len(capText(strings.Repeat("x", 10*MaxOutput))), MaxOutput+100)
	small := &headTail{max: 100}
	small.Write([]byte("short"))
	assert.Equal(t, "short", small.String())
}

func TestComposeFlags(t *testing.T) {
	for _, ok := range []string{"--build", "-v", "--tail=100", "--pull=never", "--timeout=30"} {
		assert.True(t, composeFlags.MatchString(ok), ok)
	}
	for _, bad := range []string{"-f", "--file=x", "--project-directory=/", "--env-file=/etc/x", "--tail=1;rm", "--pull=always", "--build "} {
		assert.False(t, composeFlags.MatchString(bad), bad)
	}
}
