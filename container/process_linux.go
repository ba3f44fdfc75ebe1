//go:build linux && cgo

package container

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/sbxrun/sbxrun/errcode"
)

// newProcess converts an OCI process into libcontainer's, for a
// container's init (init=true) and for exec alike, so the two can never
// disagree about which fields reach the process. cfg is the container's
// libcontainer config: the fields libcontainer takes only from there
// (umask, oom_score_adj) must match it, or the process is refused rather
// than run without them. Every field of specs.Process is accounted for in
// process_linux_test.go.
func newProcess(p *specs.Process, cfg *configs.Config, init bool) (*libcontainer.Process, error) {
	if p == nil || len(p.Args) == 0 {
		return nil, errcode.Errorf(errcode.SpecInvalid, "process.args is empty")
	}
	if !filepath.IsAbs(p.Cwd) {
		return nil, errcode.Errorf(errcode.SpecInvalid, "process.cwd %q must be absolute", p.Cwd)
	}
	if p.CommandLine != "" {
		return nil, errcode.Errorf(errcode.SpecInvalid, "process.commandLine is Windows-only; use process.args")
	}
	if p.User.Username != "" {
		return nil, errcode.Errorf(errcode.SpecInvalid, "process.user.username is Windows-only; use process.user.uid and gid")
	}
	if err := sameAsContainer("process.user.umask", p.User.Umask, cfg.Umask); err != nil {
		return nil, err
	}
	if err := sameAsContainer("process.oomScoreAdj", p.OOMScoreAdj, cfg.OomScoreAdj); err != nil {
		return nil, err
	}
	nnp := p.NoNewPrivileges
	lp := &libcontainer.Process{
		Args:            append([]string(nil), p.Args...),
		Env:             append([]string(nil), p.Env...),
		UID:             int(p.User.UID),
		GID:             int(p.User.GID),
		Cwd:             p.Cwd,
		NoNewPrivileges: &nnp,
		AppArmorProfile: p.ApparmorProfile,
		Label:           p.SelinuxLabel,
		Init:            init,
		// libcontainer's init logs at this level back to the caller, as
		// runc's do.
		LogLevel: strconv.Itoa(int(logrus.GetLevel())),
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
			return nil, errcode.Errorf(errcode.SpecInvalid, "process.rlimits: unknown rlimit %q", rl.Type)
		}
		lp.Rlimits = append(lp.Rlimits, configs.Rlimit{Type: typ, Hard: rl.Hard, Soft: rl.Soft})
	}
	if p.Scheduler != nil {
		s := *p.Scheduler
		s.Flags = append([]specs.LinuxSchedulerFlag(nil), p.Scheduler.Flags...)
		lp.Scheduler = &s
	}
	if p.IOPriority != nil {
		io := *p.IOPriority
		lp.IOPriority = &io
	}
	aff, err := configs.ConvertCPUAffinity(p.ExecCPUAffinity)
	if err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "process.execCPUAffinity: %v", err)
	}
	lp.CPUAffinity = aff
	return lp, nil
}

// sameAsContainer refuses a process value libcontainer cannot apply per
// process: it gives every process of a container the container's own.
// Unset means "the container's".
func sameAsContainer[T comparable](field string, proc, container *T) error {
	if proc == nil || (container != nil && *proc == *container) {
		return nil
	}
	want := "unset"
	if container != nil {
		want = fmt.Sprint(*container)
	}
	return errcode.Errorf(errcode.SpecInvalid, "%s %v differs from the container's (%s); every process of a container gets the container's value", field, *proc, want)
}

var rlimitTypes = map[string]int{
	"RLIMIT_AS": unix.RLIMIT_AS, "RLIMIT_CORE": unix.RLIMIT_CORE, "RLIMIT_CPU": unix.RLIMIT_CPU,
	"RLIMIT_DATA": unix.RLIMIT_DATA, "RLIMIT_FSIZE": unix.RLIMIT_FSIZE, "RLIMIT_LOCKS": unix.RLIMIT_LOCKS,
	"RLIMIT_MEMLOCK": unix.RLIMIT_MEMLOCK, "RLIMIT_MSGQUEUE": unix.RLIMIT_MSGQUEUE, "RLIMIT_NICE": unix.RLIMIT_NICE,
	"RLIMIT_NOFILE": unix.RLIMIT_NOFILE, "RLIMIT_NPROC": unix.RLIMIT_NPROC, "RLIMIT_RSS": unix.RLIMIT_RSS,
	"RLIMIT_RTPRIO": unix.RLIMIT_RTPRIO, "RLIMIT_RTTIME": unix.RLIMIT_RTTIME, "RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING,
	"RLIMIT_STACK": unix.RLIMIT_STACK,
}
