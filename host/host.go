// Package host probes the facts about this machine that policy.Compile
// needs (architecture, hard rlimits, cgroup and Landlock support, syscall
// tables), once, so the compiler itself stays pure.
package host

import (
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

// Options select what to probe.
type Options struct {
	// Rootless: probe for an unprivileged caller.
	Rootless bool
	// Arch overrides the target architecture (default: this binary's).
	Arch string
	// SystemDirs are the host system directories a tier at fs_read=allow
	// may expose (default: the built-in catalog's).
	SystemDirs []string
}

// Probe gathers HostFacts for this machine.
func Probe(opts Options) policy.HostFacts {
	arch := opts.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	f := policy.HostFacts{
		Arch:        arch,
		Rootless:    opts.Rootless,
		UID:         uint32(os.Geteuid()),
		GID:         uint32(os.Getegid()),
		HardRlimits: hardRlimits(),
		LandlockABI: landlockABI(),
		Env:         environ(),
		Syscalls:    Syscalls(),
	}
	f.CgroupLimits, f.SwapAccounting = cgroupSupport(opts.Rootless)
	dirs := opts.SystemDirs
	if dirs == nil {
		dirs = profiles.Builtin().Paths.HostSystemDirs
	}
	for _, d := range dirs {
		// Lstat, not Stat: on merged-/usr systems /bin is a symlink, and a
		// bind mount would follow it to /usr/bin anyway; listing it once
		// under its real name is enough.
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			f.HostSystemDirs = append(f.HostSystemDirs, d)
		}
	}
	sort.Strings(f.HostSystemDirs)
	return f
}

func environ() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}
