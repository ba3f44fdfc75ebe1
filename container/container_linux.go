//go:build linux && cgo

package container

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	// Registers the device-rules cgroup manager; without it libcontainer
	// cannot apply the spec's device allowlist.
	_ "github.com/opencontainers/cgroups/devices"
	// The C constructor that joins namespaces in `sbxrun init` before the Go
	// runtime starts; mandatory for libcontainer.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

func init() {
	// libcontainer re-executes this binary as "sbxrun init" inside the new
	// namespaces; that process must become the container's init, not run
	// the CLI.
	if len(os.Args) > 1 && os.Args[1] == "init" {
		libcontainer.Init()
	}
}

func (r *Runtime) load(id string) (*libcontainer.Container, error) {
	c, err := libcontainer.Load(r.Root, id)
	if errors.Is(err, libcontainer.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotExist, id)
	}
	return c, err
}

func (r *Runtime) create(o CreateOptions) (*libcontainer.Container, error) {
	if o.Spec == nil || o.Spec.Process == nil {
		return nil, errors.New("spec has no process")
	}
	if err := os.MkdirAll(r.Root, 0o711); err != nil {
		return nil, fmt.Errorf("creating state root: %w", err)
	}
	// specconv records the cwd as the bundle and resolves a relative
	// root.path against it.
	prev, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := os.Chdir(o.Bundle); err != nil {
		return nil, fmt.Errorf("entering bundle: %w", err)
	}
	defer os.Chdir(prev) //nolint:errcheck // best effort; the CLI exits soon after
	rootless := os.Geteuid() != 0
	cfg, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{
		CgroupName:      o.ID,
		NoPivotRoot:     o.NoPivot,
		NoNewKeyring:    o.NoNewKeyring,
		Spec:            o.Spec,
		RootlessEUID:    rootless,
		RootlessCgroups: rootless,
	})
	if err != nil {
		return nil, fmt.Errorf("converting spec: %w", err)
	}
	if err := r.writeJournal(o.ID, cfg); err != nil {
		return nil, err
	}
	c, err := libcontainer.Create(r.Root, o.ID, cfg)
	if err != nil {
		r.dropJournal(o.ID)
		return nil, err
	}
	if err := r.attach(o.ID, o.Attachments); err != nil {
		r.destroy(c)
		return nil, err
	}
	return c, nil
}

func newProcess(p *specs.Process, init bool) (*libcontainer.Process, error) {
	if p == nil || len(p.Args) == 0 {
		return nil, errors.New("process needs args")
	}
	if !filepath.IsAbs(p.Cwd) {
		return nil, fmt.Errorf("process cwd %q must be absolute", p.Cwd)
	}
	nnp := p.NoNewPrivileges
	lp := &libcontainer.Process{
		Args: p.Args, Env: p.Env, UID: int(p.User.UID), GID: int(p.User.GID), Cwd: p.Cwd,
		NoNewPrivileges: &nnp, AppArmorProfile: p.ApparmorProfile, Label: p.SelinuxLabel,
		Init: init,
	}
	for _, g := range p.User.AdditionalGids {
		lp.AdditionalGroups = append(lp.AdditionalGroups, int(g))
	}
	if p.ConsoleSize != nil {
		lp.ConsoleWidth, lp.ConsoleHeight = uint16(p.ConsoleSize.Width), uint16(p.ConsoleSize.Height)
	}
	if c := p.Capabilities; c != nil {
		lp.Capabilities = &configs.Capabilities{Bounding: c.Bounding, Effective: c.Effective,
			Inheritable: c.Inheritable, Permitted: c.Permitted, Ambient: c.Ambient}
	}
	for _, rl := range p.Rlimits {
		typ, ok := rlimitTypes[rl.Type]
		if !ok {
			return nil, fmt.Errorf("unknown rlimit %q", rl.Type)
		}
		lp.Rlimits = append(lp.Rlimits, configs.Rlimit{Type: typ, Hard: rl.Hard, Soft: rl.Soft})
	}
	return lp, nil
}

var rlimitTypes = map[string]int{
	"RLIMIT_AS": unix.RLIMIT_AS, "RLIMIT_CORE": unix.RLIMIT_CORE, "RLIMIT_CPU": unix.RLIMIT_CPU,
	"RLIMIT_DATA": unix.RLIMIT_DATA, "RLIMIT_FSIZE": unix.RLIMIT_FSIZE, "RLIMIT_LOCKS": unix.RLIMIT_LOCKS,
	"RLIMIT_MEMLOCK": unix.RLIMIT_MEMLOCK, "RLIMIT_MSGQUEUE": unix.RLIMIT_MSGQUEUE, "RLIMIT_NICE": unix.RLIMIT_NICE,
	"RLIMIT_NOFILE": unix.RLIMIT_NOFILE, "RLIMIT_NPROC": unix.RLIMIT_NPROC, "RLIMIT_RSS": unix.RLIMIT_RSS,
	"RLIMIT_RTPRIO": unix.RLIMIT_RTPRIO, "RLIMIT_RTTIME": unix.RLIMIT_RTTIME, "RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING,
	"RLIMIT_STACK": unix.RLIMIT_STACK,
}

// preserved returns the caller's fds 3..3+n-1 for the container, checking
// that each is open.
func preserved(n int) ([]*os.File, error) {
	var out []*os.File
	for fd := 3; fd < 3+n; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return nil, fmt.Errorf("preserved fd %d is not open: %w", fd, err)
		}
		out = append(out, os.NewFile(uintptr(fd), "preserved:"+strconv.Itoa(fd)))
	}
	return out, nil
}

// consoleSocketFile connects to a caller's console socket; libcontainer
// sends the pty master there.
func consoleSocketFile(path string) (*os.File, func(), error) {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to console socket: %w", err)
	}
	f, err := conn.(*net.UnixConn).File()
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return f, func() { f.Close(); conn.Close() }, nil
}

// startDetached starts p (via start) with the runtime's own stdio or a
// console socket, and writes the pid file: create, run -d and exec -d.
func startDetached(p *libcontainer.Process, terminal bool, consoleSocket, pidFile string, start func(*libcontainer.Process) error) error {
	if terminal != (consoleSocket != "") {
		if terminal {
			return errors.New("a terminal in a detached container needs --console-socket")
		}
		return errors.New("--console-socket needs process.terminal")
	}
	if terminal {
		f, done, err := consoleSocketFile(consoleSocket)
		if err != nil {
			return err
		}
		defer done()
		p.ConsoleSocket = f
	} else {
		p.Stdin, p.Stdout, p.Stderr = os.Stdin, os.Stdout, os.Stderr
	}
	if err := start(p); err != nil {
		return err
	}
	if pidFile != "" {
		pid, err := p.Pid()
		if err != nil {
			return err
		}
		return writePidFile(pidFile, pid)
	}
	return nil
}

// writePidFile writes pid atomically (temp file + rename), as runc does:
// callers poll for the file and must never read a partial number.
func writePidFile(path string, pid int) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("writing pid file: %w", err)
	}
	return os.Rename(tmp, path)
}

// Create creates a container whose init waits for Start.
func (r *Runtime) Create(o CreateOptions) error {
	c, err := r.create(o)
	if err != nil {
		return err
	}
	if err := r.startInit(c, o, func(p *libcontainer.Process) error { return c.Start(p) }); err != nil {
		r.destroy(c)
		return err
	}
	return nil
}

// destroy removes a container and its create journal. libcontainer runs
// poststop hooks after it has removed everything; a failing hook is then
// only a warning (runtime-spec: "the runtime MUST log a warning").
func (r *Runtime) destroy(c *libcontainer.Container) error {
	err := c.Destroy()
	if _, serr := os.Stat(filepath.Join(r.Root, c.ID())); os.IsNotExist(serr) {
		r.dropJournal(c.ID())
		if err != nil {
			fmt.Fprintf(os.Stderr, "sbxrun: warning: %s: %v\n", c.ID(), err)
		}
		return nil
	}
	return err
}

func (r *Runtime) startInit(c *libcontainer.Container, o CreateOptions, start func(*libcontainer.Process) error) error {
	p, err := r.process(o.Spec.Process, true, o.PreserveFDs, o.InitialOnly)
	if err != nil {
		return err
	}
	return startDetached(p, o.Spec.Process.Terminal, o.ConsoleSocket, o.PidFile, start)
}

// process builds a libcontainer process with the preserved fds and, for
// process_exec=deny, the exec shim.
func (r *Runtime) process(sp *specs.Process, init bool, preserveFDs int, initialOnly bool) (*libcontainer.Process, error) {
	p, err := newProcess(sp, init)
	if err != nil {
		return nil, err
	}
	if p.ExtraFiles, err = preserved(preserveFDs); err != nil {
		return nil, err
	}
	if initialOnly {
		if p.Args, p.ExtraFiles, err = r.wrapInitialOnly(p.Args, p.ExtraFiles); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Run creates and starts a container. Detached, it returns once the
// process runs; otherwise it forwards stdio and signals, waits, removes the
// container and returns the process's exit status.
func (r *Runtime) Run(o CreateOptions, detach bool, stdio IO) (int, error) {
	c, err := r.create(o)
	if err != nil {
		return -1, err
	}
	if detach {
		if err := r.startInit(c, o, func(p *libcontainer.Process) error { return c.Run(p) }); err != nil {
			r.destroy(c)
			return -1, err
		}
		return 0, nil
	}
	defer r.destroy(c) //nolint:errcheck // reported by delete if it fails
	p, err := r.process(o.Spec.Process, true, o.PreserveFDs, o.InitialOnly)
	if err != nil {
		return -1, err
	}
	status, err := foreground(c, p, o.Spec.Process.Terminal, o.PidFile, stdio, func() error { return c.Run(p) })
	if err != nil {
		_ = c.Signal(unix.SIGKILL)
	}
	return status, err
}

// Start releases a created container's init to exec the process.
func (r *Runtime) Start(id string) error {
	c, err := r.load(id)
	if err != nil {
		return err
	}
	st, err := c.Status()
	if err != nil {
		return err
	}
	if st != libcontainer.Created {
		return fmt.Errorf("cannot start a container that is %s", st)
	}
	return c.Exec()
}

// Exec runs another process in a running container.
func (r *Runtime) Exec(id string, o ExecOptions, stdio IO) (int, error) {
	c, err := r.load(id)
	if err != nil {
		return -1, err
	}
	st, err := c.Status()
	if err != nil {
		return -1, err
	}
	if st != libcontainer.Running && st != libcontainer.Created {
		return -1, fmt.Errorf("cannot exec in a container that is %s", st)
	}
	p, err := r.process(o.Process, false, o.PreserveFDs, o.InitialOnly)
	if err != nil {
		return -1, err
	}
	if o.Detach {
		return 0, startDetached(p, o.Process.Terminal, o.ConsoleSocket, o.PidFile, c.Run)
	}
	return foreground(c, p, o.Process.Terminal, o.PidFile, stdio, func() error { return c.Run(p) })
}

// Signal sends sig to the container's init, or with all to every process.
func (r *Runtime) Signal(id string, sig os.Signal, all bool) error {
	c, err := r.load(id)
	if err != nil {
		return err
	}
	if !all {
		return c.Signal(sig)
	}
	pids, err := c.Processes()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if err := unix.Kill(pid, sig.(syscall.Signal)); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}

// Delete removes a stopped container; with force it kills a running one
// first. A directory left by an interrupted create (no state.json) is
// removed too, so an aborted create never leaves state behind.
func (r *Runtime) Delete(id string, force bool) error {
	c, err := r.load(id)
	if errors.Is(err, ErrNotExist) {
		if !validID(id) {
			return err
		}
		if rerr := r.recoverAborted(id); rerr != nil {
			return rerr
		}
		_ = os.RemoveAll(filepath.Join(r.Root, id))
		if force {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	st, err := c.Status()
	if err != nil {
		return err
	}
	switch {
	case force || st == libcontainer.Created:
		return r.killAndDestroy(c)
	case st == libcontainer.Stopped:
		return r.destroy(c)
	default:
		return fmt.Errorf("cannot delete container %s that is %s (use --force)", id, st)
	}
}

func validID(id string) bool {
	return id != "" && id != "." && id != ".." && filepath.Base(id) == id
}

func (r *Runtime) killAndDestroy(c *libcontainer.Container) error {
	_ = c.Signal(unix.SIGKILL)
	for i := 0; i < 100; i++ {
		if err := c.Signal(unix.Signal(0)); err != nil {
			return r.destroy(c)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("container init survived SIGKILL for 2s")
}

// State returns a container's state in runc's format.
func (r *Runtime) State(id string) (*State, error) {
	c, err := r.load(id)
	if err != nil {
		return nil, err
	}
	return stateOf(c, r.Root)
}

func stateOf(c *libcontainer.Container, root string) (*State, error) {
	oci, err := c.OCIState()
	if err != nil {
		return nil, err
	}
	st, err := c.State()
	if err != nil {
		return nil, err
	}
	s := &State{Version: oci.Version, ID: oci.ID, Pid: oci.Pid, Status: string(oci.Status), Bundle: oci.Bundle,
		Rootfs: st.Config.Rootfs, Created: st.Created, Annotations: oci.Annotations}
	if s.Status == string(specs.StateStopped) {
		s.Pid = 0
	}
	if fi, err := os.Stat(filepath.Join(root, c.ID())); err == nil {
		uid := fi.Sys().(*syscall.Stat_t).Uid
		s.Owner = "#" + strconv.Itoa(int(uid))
		if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
			s.Owner = u.Username
		}
	}
	return s, nil
}

// List returns every container under the root.
func (r *Runtime) List() ([]State, error) {
	entries, err := os.ReadDir(r.Root)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []State
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c, err := r.load(e.Name())
		if err != nil {
			continue // a half-created container: delete --force cleans it
		}
		if s, err := stateOf(c, r.Root); err == nil {
			out = append(out, *s)
		}
	}
	return out, nil
}

// Processes lists the host pids of a container's processes.
func (r *Runtime) Processes(id string) ([]int, error) {
	c, err := r.load(id)
	if err != nil {
		return nil, err
	}
	return c.Processes()
}

// Pause freezes every process of a container.
func (r *Runtime) Pause(id string) error {
	c, err := r.load(id)
	if err != nil {
		return err
	}
	return c.Pause()
}

// Resume thaws a paused container.
func (r *Runtime) Resume(id string) error {
	c, err := r.load(id)
	if err != nil {
		return err
	}
	return c.Resume()
}

// Stats reads a container's cgroup usage.
func (r *Runtime) Stats(id string) (*Stats, error) {
	c, err := r.load(id)
	if err != nil {
		return nil, err
	}
	st, err := c.Stats()
	if err != nil {
		return nil, err
	}
	out := &Stats{}
	if cg := st.CgroupStats; cg != nil {
		out.CPUUsageNanos = cg.CpuStats.CpuUsage.TotalUsage
		out.MemoryUsage = cg.MemoryStats.Usage.Usage
		out.MemoryLimit = cg.MemoryStats.Usage.Limit
		out.PidsCurrent = cg.PidsStats.Current
		out.PidsLimit = cg.PidsStats.Limit
	}
	return out, nil
}

// Update changes a running container's memory, CPU and pids limits.
func (r *Runtime) Update(id string, res *specs.LinuxResources) error {
	c, err := r.load(id)
	if err != nil {
		return err
	}
	cfg := c.Config()
	if cfg.Cgroups == nil || cfg.Cgroups.Resources == nil {
		return errors.New("container has no cgroup to update")
	}
	cr := cfg.Cgroups.Resources
	if m := res.Memory; m != nil {
		if m.Limit != nil {
			cr.Memory = *m.Limit
		}
		if m.Swap != nil {
			cr.MemorySwap = *m.Swap
		}
	}
	if cpu := res.CPU; cpu != nil {
		if cpu.Quota != nil {
			cr.CpuQuota = *cpu.Quota
		}
		if cpu.Period != nil {
			cr.CpuPeriod = *cpu.Period
		}
	}
	if res.Pids != nil && res.Pids.Limit != nil {
		v := *res.Pids.Limit
		cr.PidsLimit = &v
	}
	return c.Set(cfg)
}
