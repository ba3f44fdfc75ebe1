//go:build linux && cgo

package container

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/opencontainers/runc/libcontainer/exeseal"
	"golang.org/x/sys/unix"
)

// execShimArg marks the exec shim: for process_exec=deny the container's
// process is this binary (a sealed copy, passed as an fd), which restricts
// itself with Landlock so that only the real program (and its ELF or script
// interpreter) may ever be executed, then execs it. Landlock cannot be
// applied by the runtime earlier: a Landlock-restricted task may not mount
// or pivot_root, which container setup needs.
const execShimArg = "sbx-exec-initial-only"

func init() {
	if len(os.Args) > 2 && os.Args[1] == execShimArg && os.Args[2] == "--" {
		err := execShim(os.Args[3:])
		// Reached only on failure: the program never runs unrestricted.
		fmt.Fprintf(os.Stderr, "sbxrun: process_exec=deny cannot be enforced: %v\n", err)
		os.Exit(126)
	}
}

func execShim(args []string) error {
	if len(args) == 0 {
		return errors.New("no program")
	}
	// Our own fd (we were exec'd as /proc/self/fd/N) must not reach the program.
	if n, err := strconv.Atoi(strings.TrimPrefix(os.Args[0], "/proc/self/fd/")); err == nil {
		unix.CloseOnExec(n)
	}
	prog := args[0]
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			return err
		}
		prog = p
	}
	allowed, err := executables(prog, 0)
	if err != nil {
		return err
	}
	cfg, err := landlock.NewConfig(landlock.AccessFSSet(llsys.AccessFSExecute))
	if err != nil {
		return err
	}
	if err := cfg.RestrictPaths(landlock.PathAccess(landlock.AccessFSSet(llsys.AccessFSExecute), allowed...)); err != nil {
		return fmt.Errorf("landlock (the kernel lacks it, or a seccomp filter blocks its syscalls): %w", err)
	}
	return syscall.Exec(prog, args, os.Environ())
}

// executables returns prog and whatever the kernel executes to run it: the
// ELF interpreter (dynamic loader) or the #! interpreter, recursively.
func executables(prog string, depth int) ([]string, error) {
	if depth > 4 {
		return nil, errors.New("interpreter chain too deep")
	}
	out := []string{prog}
	f, err := os.Open(prog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := f.ReadAt(head, 0); err == nil && string(head) == "#!" {
		line, _ := bufio.NewReader(f).ReadString('\n')
		fields := strings.Fields(strings.TrimPrefix(line, "#!"))
		if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
			return nil, fmt.Errorf("%s: bad #! line", prog)
		}
		more, err := executables(fields[0], depth+1)
		return append(out, more...), err
	}
	if ef, err := elf.NewFile(f); err == nil {
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				buf := make([]byte, p.Filesz)
				if _, err := p.ReadAt(buf, 0); err != nil {
					return nil, err
				}
				out = append(out, strings.TrimRight(string(buf), "\x00"))
			}
		}
	}
	return out, nil
}

// staticSelf reports whether this binary is statically linked: the shim
// runs inside the container's rootfs, where the host's libraries are not.
func staticSelf() (bool, error) {
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// wrapInitialOnly rewrites p to start through the exec shim: a sealed clone
// of this binary is appended to the extra files and run from its fd.
func (r *Runtime) wrapInitialOnly(args []string, extra []*os.File) ([]string, []*os.File, error) {
	static, err := staticSelf()
	if err != nil {
		return nil, nil, err
	}
	if !static {
		return nil, nil, errors.New("process_exec=deny needs a statically linked sbxrun (build it with `make build`)")
	}
	self, err := exeseal.CloneSelfExe(r.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("sealing the exec shim: %w", err)
	}
	fd := 3 + len(extra)
	wrapped := append([]string{"/proc/self/fd/" + strconv.Itoa(fd), execShimArg, "--"}, args...)
	return wrapped, append(extra, self), nil
}
