//go:build linux && cgo

package container

import (
	"fmt"

	"github.com/opencontainers/runc/libcontainer/capabilities"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Compat adjusts a spec where libcontainer v1.5.2 is stricter than the OCI
// specification and runc 1.1.5, and returns each change for the audit log:
//
//   - A seccomp allowlist without statx: libcontainer's init checks /proc
//     with statx while closing inherited fds, after the filter is loaded,
//     and treats ENOSYS as an attack (runc#5059). statx reveals nothing
//     stat and fstat do not, so it is added. A profile that explicitly
//     denies statx cannot be run and is refused.
//   - FIFO devices: libcontainer compares major:minor of every created
//     node, but a fifo has none; the spec only defines them for c, b and u.
//   - Unknown capability names are refused (libcontainer would warn and
//     drop them).
//   - Bind mounts with filesystem options (mode=, size=…): the kernel
//     ignores them on a bind and libcontainer refuses them; they are
//     dropped, as runc 1.1.5 effectively did.
func Compat(s *specs.Spec) ([]string, error) {
	var changes []string
	if s.Linux != nil && s.Linux.Seccomp != nil {
		c, err := seccompStatx(s.Linux.Seccomp)
		if err != nil {
			return nil, err
		}
		changes = append(changes, c...)
	}
	if err := knownCapabilities(s.Process); err != nil {
		return nil, err
	}
	if s.Linux != nil {
		for i := range s.Linux.Devices {
			d := &s.Linux.Devices[i]
			if d.Type == "p" && (d.Major != 0 || d.Minor != 0) {
				changes = append(changes, fmt.Sprintf("linux.devices[%d] (%s): major:minor %d:%d of a fifo ignored", i, d.Path, d.Major, d.Minor))
				d.Major, d.Minor = 0, 0
			}
		}
	}
	known := map[string]bool{}
	for _, o := range specconv.KnownMountOptions() {
		known[o] = true
	}
	for i := range s.Mounts {
		m := &s.Mounts[i]
		if m.Type != "bind" && !hasOption(m.Options, "bind") && !hasOption(m.Options, "rbind") {
			continue
		}
		var keep, dropped []string
		for _, o := range m.Options {
			if known[o] {
				keep = append(keep, o)
			} else {
				dropped = append(dropped, o)
			}
		}
		if len(dropped) > 0 {
			changes = append(changes, fmt.Sprintf("mounts[%d] (%s): filesystem options %v dropped from a bind mount (the kernel ignores them)", i, m.Destination, dropped))
			m.Options = keep
		}
	}
	return changes, nil
}

func seccompStatx(sc *specs.LinuxSeccomp) ([]string, error) {
	if sc.DefaultAction == specs.ActAllow || sc.DefaultAction == specs.ActLog {
		return nil, nil
	}
	for _, rule := range sc.Syscalls {
		for _, n := range rule.Names {
			if n != "statx" {
				continue
			}
			if rule.Action == specs.ActAllow && len(rule.Args) == 0 {
				return nil, nil
			}
			return nil, fmt.Errorf("the seccomp profile restricts statx, which libcontainer's init needs while closing inherited fds; allow statx to run this spec")
		}
	}
	sc.Syscalls = append(sc.Syscalls, specs.LinuxSyscall{Names: []string{"statx"}, Action: specs.ActAllow})
	return []string{"linux.seccomp: statx allowed (libcontainer's init needs it)"}, nil
}

// knownCapabilities refuses capability names the kernel does not have;
// libcontainer would drop them with a warning, and a typo in a capability
// list must not silently change what a container may do.
func knownCapabilities(p *specs.Process) error {
	if p == nil || p.Capabilities == nil {
		return nil
	}
	known := map[string]bool{}
	for _, c := range capabilities.KnownCapabilities() {
		known[c] = true
	}
	c := p.Capabilities
	for _, set := range [][]string{c.Bounding, c.Effective, c.Permitted, c.Inheritable, c.Ambient} {
		for _, name := range set {
			if !known[name] {
				return fmt.Errorf("unknown capability %q in process.capabilities", name)
			}
		}
	}
	return nil
}

func hasOption(opts []string, o string) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}
