//go:build e2e && bench

package e2e

import (
	"fmt"
	"os/exec"
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
