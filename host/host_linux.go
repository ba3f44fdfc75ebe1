package host

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

var rlimitTypes = map[string]int{
	"RLIMIT_AS": unix.RLIMIT_AS, "RLIMIT_CORE": unix.RLIMIT_CORE, "RLIMIT_CPU": unix.RLIMIT_CPU,
	"RLIMIT_DATA": unix.RLIMIT_DATA, "RLIMIT_FSIZE": unix.RLIMIT_FSIZE, "RLIMIT_LOCKS": 10,
	"RLIMIT_MEMLOCK": unix.RLIMIT_MEMLOCK, "RLIMIT_MSGQUEUE": 12, "RLIMIT_NICE": 13,
	"RLIMIT_NOFILE": unix.RLIMIT_NOFILE, "RLIMIT_NPROC": unix.RLIMIT_NPROC, "RLIMIT_RSS": unix.RLIMIT_RSS,
	"RLIMIT_RTPRIO": 14, "RLIMIT_RTTIME": 15, "RLIMIT_SIGPENDING": 11, "RLIMIT_STACK": unix.RLIMIT_STACK,
}

func hardRlimits() map[string]uint64 {
	out := map[string]uint64{}
	for name, res := range rlimitTypes {
		var r unix.Rlimit
		if err := unix.Getrlimit(res, &r); err == nil && r.Max != unix.RLIM_INFINITY {
			out[name] = r.Max
		}
	}
	return out
}

// landlockABI asks the kernel for its Landlock ABI version
// (LANDLOCK_CREATE_RULESET_VERSION); 0 when Landlock is absent or disabled.
func landlockABI() int {
	const createRulesetVersion = 1
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, createRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// cgroupSupport reports whether cgroup limits can be applied, and whether
// swap is accounted. Root can always set limits on a mounted memory
// controller; an unprivileged caller only where cgroup v2 delegated its own
// cgroup to it.
func cgroupSupport(rootless bool) (limits, swap bool) {
	v1 := exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	v2 := false
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		v2 = strings.Contains(" "+string(b)+" ", " memory")
	}
	swap = exists("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes") || v2
	if !rootless {
		return v1 || v2, swap
	}
	if !v2 {
		return false, swap
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false, swap
	}
	for _, line := range strings.Split(string(own), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join("/sys/fs/cgroup", rest)
			return unix.Access(filepath.Join(dir, "cgroup.subtree_control"), unix.W_OK) == nil, swap
		}
	}
	return false, swap
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
