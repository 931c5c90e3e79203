//go:build linux

package sbxsim

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// RunProxy is the hidden `__proxy` mode: it accepts connections on the listening socket
// inherited as fd 3 (bound in the host's network namespace) and joins each to target,
// dialled from the sandbox's network namespace, where this process runs. It lives until
// it is signalled.
func RunProxy(target string) int {
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbxsim proxy: %v\n", err)
		return 1
	}
	return acceptUntilSignalled(ln, func(c net.Conn) { forward(c, target) })
}

// acceptUntilSignalled serves each connection ln accepts with handle, on a goroutine of
// its own, until SIGTERM, SIGINT or SIGHUP closes ln; it returns the exit code 0.
func acceptUntilSignalled(ln net.Listener, handle func(net.Conn)) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	go func() {
		<-sigs
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		go handle(c)
	}
}

// forward copies both ways between a client and a new connection to target, passing
// half-closes through; a refused dial closes the client at once, as sbx's proxy does.
func forward(client net.Conn, target string) {
	defer client.Close()
	up, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	go pipe(up, client)
	go pipe(client, up)
	wg.Wait()
}
