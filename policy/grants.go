package policy

import "github.com/sbxrun/sbxrun/profiles"

// GrantsVersion is the schema version of Grants as printed by
// `sbxrun spec --format grants`.
const GrantsVersion = 2

// Grants is the one intermediate form between tiers and backends. It is
// OS-neutral: specgen turns it into an OCI runtime spec, seatbelt into an
// SBPL profile. Every slice is sorted or in a fixed order so that equal
// inputs marshal to equal bytes (the determinism invariant, docs/tiers.md).
type Grants struct {
	Version  int              `json:"version"`
	Tier     string           `json:"tier"`
	Level    int              `json:"level"`
	Arch     string           `json:"arch"`
	Rootless bool             `json:"rootless"`
	Access   AccessTable      `json:"access"`
	Identity Identity         `json:"identity"`
	Isolate  Isolation        `json:"isolation"`
	FS       FSGrants         `json:"fs"`
	Net      NetGrants        `json:"network"`
	Exec     ExecGrants       `json:"exec"`
	IPC      IPCGrants        `json:"ipc"`
	Env      EnvGrants        `json:"env"`
	Syscalls SyscallGrants    `json:"syscalls"`
	Limits   LimitGrants      `json:"limits"`
	Process  ProcessGrants    `json:"process"`
	Override *AppliedOverride `json:"override,omitempty"`
	Notes    []string         `json:"notes,omitempty"`
	// Unenforced lists protections of this tier that the generated artifact
	// cannot carry by itself, each with what enforces it instead or why it
	// is not enforced. Backends copy it into their output (an OCI
	// annotation, an SBPL comment) and callers print and audit it.
	Unenforced []string `json:"unenforced,omitempty"`
}

// AccessTable is the effective access level of each capability.
type AccessTable struct {
	NetworkAccess profiles.Access `json:"network_access"`
	FSRead        profiles.Access `json:"fs_read"`
	FSWrite       profiles.Access `json:"fs_write"`
	ProcessExec   profiles.Access `json:"process_exec"`
	IPC           profiles.Access `json:"ipc"`
	EnvAccess     profiles.Access `json:"env_access"`
}

// Get returns the level of c.
func (a AccessTable) Get(c profiles.Capability) profiles.Access {
	switch c {
	case profiles.NetworkAccess:
		return a.NetworkAccess
	case profiles.FSRead:
		return a.FSRead
	case profiles.FSWrite:
		return a.FSWrite
	case profiles.ProcessExec:
		return a.ProcessExec
	case profiles.IPC:
		return a.IPC
	case profiles.EnvAccess:
		return a.EnvAccess
	}
	return ""
}

func (a *AccessTable) set(c profiles.Capability, v profiles.Access) {
	switch c {
	case profiles.NetworkAccess:
		a.NetworkAccess = v
	case profiles.FSRead:
		a.FSRead = v
	case profiles.FSWrite:
		a.FSWrite = v
	case profiles.ProcessExec:
		a.ProcessExec = v
	case profiles.IPC:
		a.IPC = v
	case profiles.EnvAccess:
		a.EnvAccess = v
	}
}

// IDMap maps a range of ids inside a user namespace to the host.
type IDMap struct {
	ContainerID uint32 `json:"container_id"`
	HostID      uint32 `json:"host_id"`
	Size        uint32 `json:"size"`
}

// Identity is who the workload runs as.
type Identity struct {
	UID             uint32   `json:"uid"`
	GID             uint32   `json:"gid"`
	Capabilities    []string `json:"capabilities"`
	NoNewPrivileges bool     `json:"no_new_privileges"`
	UserNamespace   bool     `json:"user_namespace"`
	UIDMap          *IDMap   `json:"uid_map,omitempty"`
	GIDMap          *IDMap   `json:"gid_map,omitempty"`
}

// Isolation are the namespace and kernel-interface decisions.
type Isolation struct {
	HostNetwork   bool     `json:"host_network"`
	HostIPC       bool     `json:"host_ipc"`
	Hostname      string   `json:"hostname"`
	MountSysfs    bool     `json:"mount_sysfs"`
	MaskedPaths   []string `json:"masked_paths"`
	ReadonlyPaths []string `json:"readonly_paths"`
}

// PathGrant is one host path made visible.
type PathGrant struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Writable    bool   `json:"writable"`
	// System marks a host system directory granted by fs_read=allow (under
	// /run/host), as opposed to a path the config declared.
	System bool `json:"system,omitempty"`
}

// FSGrants are filesystem decisions.
type FSGrants struct {
	RootfsReadonly bool        `json:"rootfs_readonly"`
	Paths          []PathGrant `json:"paths,omitempty"`
	// TmpNoexec keeps scratch space from serving as an exec staging area.
	TmpNoexec bool `json:"tmp_noexec"`
	// Forbidden are host paths no sandbox may see, whatever else is granted:
	// engine sockets, kernel interfaces, sbxrun's own state. Enforcement,
	// lint and the seatbelt backend check against this list.
	Forbidden []string `json:"forbidden"`
}

// NetGrants are network decisions. Mode is "none" (private netns,
// loopback only), "proxy" (private netns, egress only via the allowlist
// proxy) or "host".
type NetGrants struct {
	Mode  string   `json:"mode"`
	Allow []string `json:"allow,omitempty"`
}

// ExecGrants: InitialOnly means only the initial program may run.
type ExecGrants struct {
	InitialOnly bool `json:"initial_only"`
}

// IPCGrants: Syscalls reports whether System V / mqueue calls are allowed,
// ShmWritable whether /dev/shm is writable.
type IPCGrants struct {
	Syscalls    bool `json:"syscalls"`
	ShmWritable bool `json:"shm_writable"`
}

// EnvVar is one environment variable.
type EnvVar = profiles.EnvVar

// EnvGrants is the environment after filtering. Dropped names are reported,
// never their values. Filter is the rule that produced Vars; the runtime
// applies the same rule to the environment of an incoming spec or an exec'd
// process, so a variable passes or fails identically everywhere.
type EnvGrants struct {
	Vars    []EnvVar  `json:"vars"`
	Dropped []string  `json:"dropped,omitempty"`
	Filter  EnvFilter `json:"filter"`
}

// SyscallArg is an argument condition.
type SyscallArg = profiles.SyscallArg

// SyscallRule is a set of syscall names with optional argument conditions.
type SyscallRule struct {
	Names []string     `json:"names"`
	Args  []SyscallArg `json:"args,omitempty"`
}

// SyscallGroup is a named group with one action, resolved for one arch.
// Errno is 0 for "allow".
type SyscallGroup struct {
	Name   string        `json:"name"`
	Action string        `json:"action"`
	Errno  uint          `json:"errno,omitempty"`
	Why    string        `json:"why"`
	Rules  []SyscallRule `json:"rules"`
}

// SyscallGrants is the syscall filter: anything not matched returns
// DefaultErrno (ENOSYS, so callers treat it as an old kernel and fall back).
type SyscallGrants struct {
	DefaultErrno uint           `json:"default_errno"`
	CompatArches bool           `json:"compat_arches"`
	Groups       []SyscallGroup `json:"groups"`
}

// Rlimit is a POSIX resource limit.
type Rlimit struct {
	Type string `json:"type"`
	Soft uint64 `json:"soft"`
	Hard uint64 `json:"hard"`
}

// LimitGrants are resource ceilings. Cgroups false means the cgroup limits
// cannot be applied on this host (rootless without delegation): the spec
// omits them and Unenforced says so.
type LimitGrants struct {
	Cgroups     bool     `json:"cgroups"`
	MemoryBytes int64    `json:"memory_bytes"`
	SwapBytes   int64    `json:"swap_bytes,omitempty"`
	CPUQuota    int64    `json:"cpu_quota_us"`
	CPUPeriod   uint64   `json:"cpu_period_us"`
	Pids        int64    `json:"pids"`
	TmpBytes    int64    `json:"tmp_bytes"`
	ShmBytes    int64    `json:"shm_bytes"`
	Rlimits     []Rlimit `json:"rlimits"`
}

// ProcessGrants is the workload.
type ProcessGrants struct {
	Args     []string `json:"args"`
	Cwd      string   `json:"cwd"`
	Terminal bool     `json:"terminal"`
}

// AppliedOverride records which widenings an override authorized.
type AppliedOverride struct {
	Label     string   `json:"label"`
	Widenings []string `json:"widenings"`
}
