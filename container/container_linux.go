//go:build linux && cgo

package container

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
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

	"github.com/sbxrun/sbxrun/errcode"
)

func init() {
	// libcontainer re-executes this binary as "sbxrun init" inside the new
	// namespaces; that process must become the container's init, not run
	// the CLI.
	if len(os.Args) > 1 && os.Args[1] == "init" {
		libcontainer.Init()
	}
}

// load validates id and loads its container.
func (r *Runtime) load(id string) (c *libcontainer.Container, err error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if err := r.checkRoot(); err != nil {
		return nil, err
	}
	// libcontainer dereferences a state.json without a config; a corrupt
	// state must be an error, never a crash.
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, corrupt(id, fmt.Errorf("%v", p))
		}
	}()
	c, err = libcontainer.Load(r.Root, id)
	switch {
	case errors.Is(err, libcontainer.ErrNotExist):
		return nil, notExist(id)
	case err != nil && isStateCorruption(err):
		return nil, corrupt(id, err)
	}
	return c, err
}

// errCorrupt is wrapped by the error for a container whose state cannot
// be read.
var errCorrupt = errors.New("corrupt container state")

func corrupt(id string, err error) error {
	return &errcode.Error{Code: errcode.StateUntrusted, Err: errCorrupt,
		Msg: fmt.Sprintf("state of container %s is corrupt (%v); delete --force removes it", id, err)}
}

func isStateCorruption(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// checkRoot refuses a state root someone other than the caller (or root)
// could write: whoever can, can swap a container's state, and with it what
// later verbs act on.
func (r *Runtime) checkRoot() error {
	fi, err := os.Lstat(r.Root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking state root: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok || !fi.IsDir():
		return errcode.Errorf(errcode.StateUntrusted, "state root %s is not a directory (a symlink?); not trusted", r.Root)
	case int(st.Uid) != os.Geteuid() && st.Uid != 0:
		return errcode.Errorf(errcode.StateUntrusted, "state root %s is owned by uid %d, not %d or root; not trusted", r.Root, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return errcode.Errorf(errcode.StateUntrusted, "state root %s is writable by group or others (mode %04o); not trusted", r.Root, fi.Mode().Perm())
	}
	return nil
}

// conflict is the error for a verb the container's state does not allow.
func conflict(format string, args ...any) error {
	return errcode.Errorf(errcode.StateConflict, format, args...)
}

// notRunning is the error for acting on a stopped container. containerd
// recognises it by libcontainer's text "container not running".
func notRunning(id, verb string) error {
	return errcode.Errorf(errcode.StateConflict, "cannot %s %s: %w", verb, id, libcontainer.ErrNotRunning)
}

// loadLive loads a container that verb needs alive: a stopped one is a
// StateConflict saying "container not running", which containerd matches.
func (r *Runtime) loadLive(id, verb string) (*libcontainer.Container, libcontainer.Status, error) {
	c, err := r.load(id)
	if err != nil {
		return nil, 0, err
	}
	st, err := c.Status()
	if err != nil {
		return nil, 0, err
	}
	if st == libcontainer.Stopped {
		return nil, st, notRunning(id, verb)
	}
	return c, st, nil
}

func (r *Runtime) create(o CreateOptions) (*libcontainer.Container, error) {
	if err := ValidateID(o.ID); err != nil {
		return nil, err
	}
	if o.Spec == nil || o.Spec.Process == nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "spec has no process")
	}
	if err := os.MkdirAll(r.Root, 0o711); err != nil {
		return nil, fmt.Errorf("creating state root: %w", err)
	}
	if err := r.checkRoot(); err != nil {
		return nil, err
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
		return nil, errcode.Errorf(errcode.SpecInvalid, "converting spec: %w", err)
	}
	// The journal is created exclusively: it is also the id's lock, so of
	// two creates of one id exactly one gets past here.
	paths, err := r.writeJournal(o.ID, cfg)
	if err != nil {
		return nil, err
	}
	if o.OwnCgroup {
		for _, p := range paths {
			if _, err := os.Stat(p); err == nil {
				r.dropJournal(o.ID)
				return nil, errcode.Errorf(errcode.SpecNoncompliant, "linux.cgroupsPath: cgroup %s already exists; a sandbox gets a cgroup of its own (its limits and kill --all would reach whatever runs there)", p)
			}
		}
	}
	c, err := libcontainer.Create(r.Root, o.ID, cfg)
	if err != nil {
		r.dropJournal(o.ID)
		if errors.Is(err, libcontainer.ErrExist) {
			return nil, conflict("container %s already exists", o.ID)
		}
		return nil, err
	}
	if err := r.attach(o.ID, o.Attachments); err != nil {
		r.destroy(c)
		return nil, err
	}
	return c, nil
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
			slog.Warn("container removed; a poststop hook failed", "id", c.ID(), "err", err)
		}
		return nil
	}
	return err
}

func (r *Runtime) startInit(c *libcontainer.Container, o CreateOptions, start func(*libcontainer.Process) error) error {
	p, err := r.process(c, o.Spec.Process, true, o.PreserveFDs, o.InitialOnly)
	if err != nil {
		return err
	}
	return startDetached(p, o.Spec.Process.Terminal, o.ConsoleSocket, o.PidFile, start)
}

// process builds a libcontainer process for c with the preserved fds and,
// for process_exec=deny, the exec shim.
func (r *Runtime) process(c *libcontainer.Container, sp *specs.Process, init bool, preserveFDs int, initialOnly bool) (*libcontainer.Process, error) {
	cfg := c.Config()
	p, err := newProcess(sp, &cfg, init)
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
	p, err := r.process(c, o.Spec.Process, true, o.PreserveFDs, o.InitialOnly)
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
		return conflict("cannot start container %s: it is %s", id, st)
	}
	return c.Exec()
}

// Exec runs another process in a running container.
func (r *Runtime) Exec(id string, o ExecOptions, stdio IO) (int, error) {
	c, st, err := r.loadLive(id, "exec in")
	if err != nil {
		return -1, err
	}
	if st != libcontainer.Running && st != libcontainer.Created {
		return -1, conflict("cannot exec in container %s: it is %s", id, st)
	}
	p, err := r.process(c, o.Process, false, o.PreserveFDs, o.InitialOnly)
	if err != nil {
		return -1, err
	}
	if o.Detach {
		return 0, startDetached(p, o.Process.Terminal, o.ConsoleSocket, o.PidFile, c.Run)
	}
	return foreground(c, p, o.Process.Terminal, o.PidFile, stdio, func() error { return c.Run(p) })
}

// Signal sends sig to the container's init or, with all, to every process
// in the container's cgroup. A stopped container is a StateConflict whose
// message contains libcontainer's "container not running".
func (r *Runtime) Signal(id string, sig os.Signal, all bool) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	s, ok := sig.(unix.Signal)
	if !ok || s <= 0 {
		return errcode.Errorf(errcode.ConfigInvalid, "invalid signal %v", sig)
	}
	c, st, err := r.loadLive(id, "signal")
	if err != nil {
		return err
	}
	if all {
		err = signalAll(c, s, st == libcontainer.Paused)
	} else {
		err = c.Signal(s)
	}
	if errors.Is(err, libcontainer.ErrNotRunning) {
		return notRunning(id, "signal")
	}
	return err
}

// signalAll sends sig to every process of c with the cgroup frozen, so
// that nothing can fork between reading the cgroup's processes and
// signalling them: runc's signalAllProcesses. libcontainer offers that
// only through Container.Signal(SIGKILL) in a shared pid namespace, which
// is used as is; every other case freezes, signals and thaws here. A
// container the user paused stays frozen, except for SIGKILL, which a
// task frozen by the v1 freezer would not act on until thawed.
func signalAll(c *libcontainer.Container, sig unix.Signal, paused bool) error {
	m, err := cgroupManager(c)
	if err != nil {
		return err
	}
	cfg := c.Config()
	if sig == unix.SIGKILL && !cfg.Namespaces.IsPrivate(configs.NEWPID) {
		if err := c.Signal(sig); err != nil {
			return err
		}
		if paused {
			return m.Freeze(cgroups.Thawed)
		}
		return nil
	}
	if !paused {
		if err := m.Freeze(cgroups.Frozen); err != nil {
			// Signalling unfrozen would race with fork: refuse instead.
			_ = m.Freeze(cgroups.Thawed)
			return errcode.Errorf(errcode.Unenforceable, "cannot freeze %s to signal all its processes: %w", c.ID(), err)
		}
	}
	pids, err := m.GetAllPids()
	if err == nil {
		for _, pid := range pids {
			if kerr := unix.Kill(pid, sig); kerr != nil && !errors.Is(kerr, unix.ESRCH) {
				err = fmt.Errorf("signalling pid %d: %w", pid, kerr)
				break
			}
		}
	}
	if !paused || sig == unix.SIGKILL {
		if terr := m.Freeze(cgroups.Thawed); terr != nil && err == nil {
			err = terr
		}
	}
	return err
}

// cgroupManager opens the cgroups libcontainer recorded for c.
func cgroupManager(c *libcontainer.Container) (cgroups.Manager, error) {
	cfg := c.Config()
	st, err := c.State()
	if err != nil {
		return nil, err
	}
	if cfg.Cgroups == nil || len(st.CgroupPaths) == 0 {
		return nil, errcode.Errorf(errcode.Unenforceable, "container %s has no cgroup", c.ID())
	}
	return manager.NewWithPaths(cfg.Cgroups, st.CgroupPaths)
}

// Delete removes a stopped container; with force it kills a running one
// first. A directory left by an interrupted create (no state.json) is
// removed too, so an aborted create never leaves state behind.
func (r *Runtime) Delete(id string, force bool) error {
	c, err := r.load(id)
	// Without readable state only the create journal says where the
	// container's cgroups are: --force kills what runs there and removes
	// everything, as after an aborted create.
	if errors.Is(err, ErrNotExist) || (force && errors.Is(err, errCorrupt)) {
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
		return conflict("cannot delete container %s: it is %s (use --force)", id, st)
	}
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
	if err := r.checkRoot(); err != nil {
		return nil, err
	}
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

// Pause freezes every process of a running (or created) container.
func (r *Runtime) Pause(id string) error {
	c, st, err := r.loadLive(id, "pause")
	if err != nil {
		return err
	}
	if st == libcontainer.Paused {
		return conflict("container %s is already paused", id)
	}
	return c.Pause()
}

// Resume thaws a paused container.
func (r *Runtime) Resume(id string) error {
	c, err := r.load(id)
	if err != nil {
		return err
	}
	st, err := c.Status()
	if err != nil {
		return err
	}
	if st != libcontainer.Paused {
		return conflict("cannot resume container %s: it is %s, not paused", id, st)
	}
	return c.Resume()
}

// Update applies a resources update to a running container's cgroup.
// Every field is applied or the whole update is refused, naming the
// field (see applyResources); the device allowlist is never changed.
func (r *Runtime) Update(id string, res *specs.LinuxResources) error {
	c, _, err := r.loadLive(id, "update")
	if err != nil {
		return err
	}
	state, err := c.State()
	if err != nil {
		return err
	}
	cfg := c.Config()
	if cfg.Cgroups == nil || cfg.Cgroups.Resources == nil || len(state.CgroupPaths) == 0 {
		return errcode.Errorf(errcode.Unenforceable, "container %s has no cgroup to update", id)
	}
	// A copy: libcontainer restores its own config's resources if Set
	// fails, so that config must not be changed in place.
	cg := *cfg.Cgroups
	next := *cg.Resources
	v2 := cgroups.IsCgroup2UnifiedMode()
	if err := applyResources(&next, res, v2, cgroupKnobs(state.CgroupPaths, v2)); err != nil {
		return err
	}
	// The device rules are not part of an update (refused above); runc
	// skips rewriting them in the same way.
	next.SkipDevices = true
	cg.Resources = &next
	cfg.Cgroups = &cg
	if err := c.Set(cfg); err != nil {
		if errors.Is(err, libcontainer.ErrNotRunning) {
			return notRunning(id, "update")
		}
		return errcode.Errorf(errcode.Internal, "updating %s: %w", id, err)
	}
	return nil
}

// Limits returns a running container's current ceilings — memory,
// memory+swap, CPU quota and period, pids — as the runtime last set them
// (at create, or by the last update).
func (r *Runtime) Limits(id string) (*specs.LinuxResources, error) {
	c, _, err := r.loadLive(id, "read the limits of")
	if err != nil {
		return nil, err
	}
	cfg := c.Config()
	if cfg.Cgroups == nil || cfg.Cgroups.Resources == nil {
		return nil, errcode.Errorf(errcode.Unenforceable, "container %s has no cgroup limits", id)
	}
	res := cfg.Cgroups.Resources
	mem, swap, quota, period := res.Memory, res.MemorySwap, res.CpuQuota, res.CpuPeriod
	out := &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &mem, Swap: &swap}, CPU: &specs.LinuxCPU{Quota: &quota, Period: &period}}
	if res.PidsLimit != nil {
		pids := *res.PidsLimit
		out.Pids = &specs.LinuxPids{Limit: &pids}
	}
	return out, nil
}
