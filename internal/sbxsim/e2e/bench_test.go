//go:build e2e && bench

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The benchmarks measure what the backend's design leans on: per-call exec latency
// against its floor (a bare process start, one nsenter into the sandbox), and create.
//
//	go test -tags e2e,bench -run '^$' -bench 'ProcessStart|Exec' -benchtime 300x ./internal/sbxsim/e2e/
//	go test -tags e2e,bench -run '^$' -bench Create -benchtime 5x ./internal/sbxsim/e2e/

// runBench runs argv b.N times with env, failing on the first error.
func runBench(b *testing.B, env []string, argv ...string) {
	b.Helper()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v: %s", argv, err, out)
		}
	}
}

func BenchmarkProcessStart(b *testing.B) { runBench(b, nil, "/bin/true") }

func BenchmarkExec(b *testing.B) {
	s := newSim(b, false)
	name := s.create("bench")
	b.Run("nsenter", func(b *testing.B) {
		pid := strconv.Itoa(s.stateOf(name).Init.Pid)
		runBench(b, nil, "nsenter", "--target", pid, "--mount", "--uts", "--ipc", "--net", "--pid", "/bin/true")
	})
	b.Run("sbxsim", func(b *testing.B) {
		runBench(b, s.env(), bin, "exec", name, "/bin/true")
	})
}

func BenchmarkCreate(b *testing.B) {
	for _, docker := range []bool{false, true} {
		b.Run(fmt.Sprintf("docker=%v", docker), func(b *testing.B) {
			s := newSim(b, docker)
			for i := 0; i < b.N; i++ {
				name := s.create(fmt.Sprintf("c%d", i))
				b.StopTimer()
				s.must("rm", "-f", name)
				b.StartTimer()
			}
		})
	}
}

// BenchmarkEgress: one TCP round trip (connect, a line each way, close) from inside a
// sandbox to a host server, straight to the veth's host end (not proxied) and to a test
// host through the egress proxy and its policy, with its log entry. bash builtins make
// the connections, b.N of them in one exec, so no process start is counted.
//
//	go test -tags e2e,bench -run '^$' -bench Egress -benchtime 500x ./internal/sbxsim/e2e/
func BenchmarkEgress(b *testing.B) {
	s := newSim(b, false)
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprint(c, "echo:"+line)
			}()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if r := s.runWith([]string{v055}, "", "policy", "init", "deny-all"); r.code != 0 {
		b.Fatal(r)
	}
	if r := s.runWith([]string{v055}, "", "policy", "allow", "network", "echo.test"); r.code != 0 {
		b.Fatal(r)
	}
	name := s.name("egress")
	if r := s.runWith([]string{v055, "SBXSIM_RESOLVE=echo.test=127.0.0.1:" + port}, "", "create", "-q", "--name", name, "shell", b.TempDir()); r.code != 0 {
		b.Fatal(r)
	}
	var st struct {
		Net struct {
			HostIP string `json:"hostIP"`
		} `json:"net"`
	}
	raw, err := os.ReadFile(filepath.Join(s.state, "sandboxes", name, "state.json"))
	if err != nil || json.Unmarshal(raw, &st) != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, host string }{{"direct", st.Net.HostIP}, {"proxy", "echo.test"}} {
		b.Run(c.name, func(b *testing.B) {
			script := fmt.Sprintf(`for i in $(seq %d); do exec 3<>/dev/tcp/%s/%s; echo x >&3; read -r l <&3; exec 3>&-; [ "$l" = echo:x ] || exit 9; done`, b.N, c.host, port)
			b.ResetTimer()
			if r := s.runWith([]string{v055}, "", "exec", name, "bash", "-c", script); r.code != 0 {
				b.Fatal(r)
			}
		})
	}
}
