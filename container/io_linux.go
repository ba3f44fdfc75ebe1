//go:build linux && cgo

package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// foreground starts p with start, connects it to the caller's stdio,
// forwards the signals sbxrun receives to it, and returns its exit status.
// With terminal the process gets a pty (foregroundTTY), else pipes
// (foregroundPipes).
func foreground(c *libcontainer.Container, p *libcontainer.Process, terminal bool, pidFile string, stdio IO, start func() error) (int, error) {
	// Before start: a signal that arrives while the process starts is
	// queued and forwarded, not lost or acted on by sbxrun itself.
	sigc := make(chan os.Signal, 128)
	signal.Notify(sigc)
	defer signal.Stop(sigc)
	if terminal {
		return foregroundTTY(p, pidFile, stdio, sigc, start)
	}
	return foregroundPipes(c, p, pidFile, stdio, sigc, start)
}

// foregroundPipes connects stdio through pipes owned by the container's
// root, so a process in a user namespace can use them without sbxrun
// chown-ing the caller's own terminal.
func foregroundPipes(c *libcontainer.Container, p *libcontainer.Process, pidFile string, stdio IO, sigc <-chan os.Signal, start func() error) (int, error) {
	cfg := c.Config()
	rootUID, err := cfg.HostRootUID()
	if err != nil {
		return -1, err
	}
	rootGID, err := cfg.HostRootGID()
	if err != nil {
		return -1, err
	}
	pipes, err := p.InitializeIO(rootUID, rootGID)
	if err != nil {
		return -1, err
	}
	go func() {
		if stdio.Stdin != nil {
			_, _ = io.Copy(pipes.Stdin, stdio.Stdin)
		}
		pipes.Stdin.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go copyAndClose(&wg, stdio.Stdout, pipes.Stdout)
	go copyAndClose(&wg, stdio.Stderr, pipes.Stderr)
	err = start()
	// The child ends of the pipes belong to the container now (or to
	// nobody, if it did not start): closing ours lets the copies end.
	for _, f := range []any{p.Stdin, p.Stdout, p.Stderr} {
		if cl, ok := f.(io.Closer); ok {
			cl.Close()
		}
	}
	if err != nil {
		return -1, err
	}
	return waitForeground(p, nil, pidFile, sigc, &wg)
}

// foregroundTTY gives the process a pty: libcontainer creates it inside
// the container and sends its master over a socket pair; sbxrun then
// copies between the master and stdio, with the caller's terminal (if
// stdin is one) in raw mode and its size passed on.
func foregroundTTY(p *libcontainer.Process, pidFile string, stdio IO, sigc <-chan os.Signal, start func() error) (int, error) {
	parent, child, err := socketPair()
	if err != nil {
		return -1, err
	}
	defer parent.Close()
	p.ConsoleSocket = child
	console := make(chan consoleResult, 1)
	go func() {
		f, err := recvFile(parent)
		console <- consoleResult{f, err}
	}()
	err = start()
	// Closed either way: without a sender, recvFile then sees EOF.
	child.Close()
	if err != nil {
		return -1, err
	}
	res := <-console
	if res.err != nil {
		_ = p.Signal(unix.SIGKILL)
		_, _ = p.Wait()
		return -1, fmt.Errorf("receiving the console: %w", res.err)
	}
	master := res.f
	defer master.Close()
	var wg sync.WaitGroup
	restore := attachTerminal(master, stdio, &wg)
	defer restore()
	return waitForeground(p, master, pidFile, sigc, &wg)
}

// waitForeground writes the pid file, forwards signals until p exits
// (SIGWINCH resizes master, when there is one), waits for the output
// copies in wg to drain and returns p's exit status.
func waitForeground(p *libcontainer.Process, master *os.File, pidFile string, sigc <-chan os.Signal, wg *sync.WaitGroup) (int, error) {
	if pidFile != "" {
		pid, err := p.Pid()
		if err == nil {
			err = writePidFile(pidFile, pid)
		}
		if err != nil {
			_ = p.Signal(unix.SIGKILL)
			_, _ = p.Wait()
			return -1, err
		}
	}
	done := make(chan waitResult, 1)
	go func() {
		st, err := p.Wait()
		done <- waitResult{st, err}
	}()
	for {
		select {
		case s := <-sigc:
			switch s {
			case unix.SIGCHLD, unix.SIGURG, unix.SIGPIPE:
				// SIGURG is the Go runtime's own preemption signal.
			case unix.SIGWINCH:
				if master != nil {
					resize(master)
				}
			default:
				_ = p.Signal(s)
			}
		case r := <-done:
			wg.Wait()
			return exitStatus(r)
		}
	}
}

type consoleResult struct {
	f   *os.File
	err error
}

type waitResult struct {
	st  *os.ProcessState
	err error
}

func exitStatus(r waitResult) (int, error) {
	if r.st == nil {
		return -1, r.err
	}
	if ws, ok := r.st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	var ee interface{ ExitCode() int }
	if r.err != nil && !errors.As(r.err, &ee) {
		return -1, r.err
	}
	return r.st.ExitCode(), nil
}

func copyAndClose(wg *sync.WaitGroup, dst io.Writer, src io.ReadCloser) {
	defer wg.Done()
	if dst != nil {
		_, _ = io.Copy(dst, src)
	} else {
		_, _ = io.Copy(io.Discard, src)
	}
	src.Close()
}

// attachTerminal wires the pty master to stdio, putting the caller's
// terminal in raw mode for the duration.
func attachTerminal(master *os.File, stdio IO, wg *sync.WaitGroup) (restore func()) {
	restore = func() {}
	if in, ok := stdio.Stdin.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		if old, err := term.MakeRaw(int(in.Fd())); err == nil {
			restore = func() { _ = term.Restore(int(in.Fd()), old) }
		}
		resize(master)
	}
	if stdio.Stdin != nil {
		go func() { _, _ = io.Copy(master, stdio.Stdin) }()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// EIO ends the copy once the container closes its side.
		_, _ = io.Copy(stdio.Stdout, master)
	}()
	return restore
}

func resize(master *os.File) {
	ws, err := unix.IoctlGetWinsize(int(os.Stdin.Fd()), unix.TIOCGWINSZ)
	if err == nil {
		_ = unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, ws)
	}
}

func socketPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("creating console socket pair: %w", err)
	}
	return os.NewFile(uintptr(fds[1]), "console-parent"), os.NewFile(uintptr(fds[0]), "console-child"), nil
}

// recvFile receives one fd sent with SCM_RIGHTS.
func recvFile(sock *os.File) (*os.File, error) {
	name := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), name, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("expected one control message (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("expected one fd (%v)", err)
	}
	return os.NewFile(uintptr(fds[0]), string(name[:n])), nil
}
