package policy

// HostFacts are what Compile needs to know about the machine. They are
// probed once, elsewhere (host.Probe), so that Compile itself makes no
// OS call and tests can pass any host they like.
type HostFacts struct {
	// Arch is the target GOARCH: "amd64" or "arm64".
	Arch string
	// Rootless: the sandbox is created by an unprivileged user.
	Rootless bool
	// UID and GID of the caller, mapped to container root when rootless.
	UID, GID uint32
	// HardRlimits are the caller's hard limits by OCI type (RLIMIT_NOFILE).
	// A missing type means unlimited. No sandbox can be given more: the
	// kernel refuses to raise a hard limit without CAP_SYS_RESOURCE.
	HardRlimits map[string]uint64
	// CgroupLimits: cgroup resource limits can be applied (false for
	// rootless without cgroup delegation).
	CgroupLimits bool
	// SwapAccounting: the memory controller accounts swap, so memory+swap
	// can be capped to the memory limit.
	SwapAccounting bool
	// LandlockABI is the kernel's Landlock ABI version, 0 if absent.
	LandlockABI int
	// HostSystemDirs are the tier's host system dirs that exist here.
	HostSystemDirs []string
	// StatePaths are where this installation of sbxrun keeps its state
	// (runtime root, bindings, audit log, configuration): never mountable
	// into a sandbox, like the catalog's forbidden sources.
	StatePaths []string
	// Env is the caller's environment, the source of env.pass.
	Env map[string]string
	// Syscalls validates syscall names for an architecture.
	Syscalls SyscallResolver
}

// SyscallResolver reports whether a syscall name exists on an architecture
// (a GOARCH name). libcontainer silently ignores unknown names, so every name
// must be checked before it reaches a filter.
type SyscallResolver interface {
	Known(name, arch string) (bool, error)
}

// ReferenceFacts describes a fixed, documented host: rootful, cgroup limits
// with swap accounting, Landlock ABI 7, hard NOFILE 20000 and NPROC 96551,
// /usr as the only host system dir, empty environment.
// Compiling against it gives output that is byte-identical on every machine,
// for committed artifacts and golden tests (`sbxrun spec --reference-host`).
func ReferenceFacts(arch string, syscalls SyscallResolver) HostFacts {
	return HostFacts{
		Arch:           arch,
		HardRlimits:    map[string]uint64{"RLIMIT_NOFILE": 20000, "RLIMIT_NPROC": 96551},
		CgroupLimits:   true,
		SwapAccounting: true,
		LandlockABI:    7,
		HostSystemDirs: []string{"/usr"},
		Env:            map[string]string{},
		Syscalls:       syscalls,
	}
}
