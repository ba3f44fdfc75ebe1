// Package profiles holds the sandbox tiers as data: the four tiers
// (strict, strict_plus, moderate, permissive), the access level each
// grants to the six capabilities, and the syscall groups each tier allows or
// denies, every entry with the reason it exists.
//
// The data lives in tiers.json and syscalls.json, embedded at build time and
// decoded strictly: an unknown field, a duplicate name or an access level a
// capability does not know is an error, so a typo in policy data can never
// silently weaken a tier. This package only describes tiers; policy.Compile
// turns a tier plus a config into Grants.
//
// Access levels, per capability (see docs/tiers.md for the full manual):
//
//	network_access  deny      private netns with loopback only
//	                filtered  private netns, egress only via the allowlist proxy
//	                allow     host network namespace
//	fs_read         deny      only the image rootfs, read-only
//	                scoped    plus declared host roots, read-only
//	                allow     plus the host system dirs read-only under /run/host
//	fs_write        deny      read-only rootfs, scratch tmpfs /tmp only
//	                scoped    plus declared host paths read-write
//	                allow     writable rootfs plus declared host paths read-write
//	process_exec    deny      the initial program only
//	                allow     any program
//	ipc             deny      private IPC namespace, IPC syscalls refused
//	                scoped    private IPC namespace, IPC allowed inside it
//	                allow     host IPC namespace
//	env_access      deny      fixed baseline (PATH, HOME) only
//	                filtered  declared variables minus credential-looking names
//	                allow     declared variables unfiltered
package profiles

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
)

// Capability names one of the six sandbox capabilities.
type Capability string

// The six capabilities, in the order of the tier table (docs/tiers.md).
const (
	NetworkAccess Capability = "network_access"
	FSRead        Capability = "fs_read"
	FSWrite       Capability = "fs_write"
	ProcessExec   Capability = "process_exec"
	IPC           Capability = "ipc"
	EnvAccess     Capability = "env_access"
)

// Capabilities lists every capability in table order.
var Capabilities = []Capability{NetworkAccess, FSRead, FSWrite, ProcessExec, IPC, EnvAccess}

// Access is the level at which a capability is granted.
type Access string

// The four access levels.
const (
	Deny     Access = "deny"
	Scoped   Access = "scoped"
	Filtered Access = "filtered"
	Allow    Access = "allow"
)

// levels orders, per capability, the access levels that capability knows,
// from most to least restrictive. A level missing here is invalid for that
// capability (process_exec has no partial form: an exec allowlist would be a
// filtered level, which we do not offer yet).
var levels = map[Capability][]Access{
	NetworkAccess: {Deny, Filtered, Allow},
	FSRead:        {Deny, Scoped, Allow},
	FSWrite:       {Deny, Scoped, Allow},
	ProcessExec:   {Deny, Allow},
	IPC:           {Deny, Scoped, Allow},
	EnvAccess:     {Deny, Filtered, Allow},
}

// Rank returns the position of a in the order of c (0 = most restrictive)
// and whether c knows a at all.
func Rank(c Capability, a Access) (int, bool) {
	for i, l := range levels[c] {
		if l == a {
			return i, true
		}
	}
	return 0, false
}

// Levels returns the access levels c knows, most restrictive first.
func Levels(c Capability) []Access { return append([]Access(nil), levels[c]...) }

// Grant is one capability's access level with its reason.
type Grant struct {
	Access Access `json:"access"`
	Why    string `json:"why"`
}

// RunAs is the identity the workload runs as inside the sandbox.
type RunAs struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	Why string `json:"why"`
}

// Limits are the tier's default resource ceilings (cgroup side).
type Limits struct {
	MemoryBytes int64 `json:"memory_bytes"`
	CPUMillis   int64 `json:"cpu_millis"`
	Pids        int64 `json:"pids"`
	TmpBytes    int64 `json:"tmp_bytes"`
}

// Rlimit is a default POSIX resource limit of a tier.
type Rlimit struct {
	Type string `json:"type"`
	Soft uint64 `json:"soft"`
	Hard uint64 `json:"hard"`
	Why  string `json:"why"`
}

// Backend names a hardened runtime backend a tier is meant to run under.
// No sbxrun component starts one yet, so policy.Compile reports a tier's
// backend as not enforced rather than claiming it is used.
type Backend struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// PathSet is a list of paths that share one reason.
type PathSet struct {
	Paths []string `json:"paths"`
	Why   string   `json:"why"`
}

// Tier is one sandbox profile.
type Tier struct {
	Name              string               `json:"name"`
	Level             int                  `json:"level"`
	Description       string               `json:"description"`
	Capabilities      map[Capability]Grant `json:"capabilities"`
	RunAs             RunAs                `json:"run_as"`
	LinuxCapabilities []string             `json:"linux_capabilities"`
	UserNamespace     bool                 `json:"user_namespace"`
	MountSysfs        bool                 `json:"mount_sysfs"`
	CompatArches      bool                 `json:"compat_arches"`
	SyscallGroups     []string             `json:"syscall_groups"`
	Limits            Limits               `json:"limits"`
	Rlimits           []Rlimit             `json:"rlimits"`
	HardenedBackend   *Backend             `json:"hardened_backend,omitempty"`
	// MaskedPaths are kernel interfaces this tier hides on top of the
	// shared Paths.Masked, in sets that each carry their reason.
	MaskedPaths []PathSet `json:"masked_paths,omitempty"`
}

// Access returns the level the tier grants to c.
func (t *Tier) Access(c Capability) Access { return t.Capabilities[c].Access }

// EnvVar is a fixed environment variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// EnvRules are the environment rules shared by all tiers.
type EnvRules struct {
	// Baseline is what every sandbox gets, whatever env_access says.
	Baseline []EnvVar `json:"baseline"`
	// EngineNames are variables engines set per container (the terminal
	// type, the hostname, podman's container marker): they carry nothing of
	// the caller, so a sandbox keeps them even at env_access=deny.
	EngineNames []string `json:"engine_names"`
	// FilteredPass are the name patterns passed through at env_access=filtered
	// without being declared.
	FilteredPass []string `json:"filtered_pass"`
	// SecretPatterns are name patterns dropped at env_access=filtered even
	// when declared: the names credentials conventionally carry.
	SecretPatterns []string `json:"secret_patterns"`
}

// Paths are the path lists shared by all tiers.
type Paths struct {
	// Masked are hidden from the sandbox (files behind /dev/null, dirs behind
	// an empty read-only tmpfs): each leaks host data or kernel state.
	Masked []string `json:"masked"`
	// Readonly are kernel interfaces remounted read-only.
	Readonly []string `json:"readonly"`
	// HostSystemDirs are exposed read-only under /run/host at fs_read=allow.
	HostSystemDirs []string `json:"host_system_dirs"`
	// ForbiddenSources may never be mounted into a sandbox in any tier: an
	// engine socket is root on the host, and the others expose the host
	// kernel or sbxrun's own state.
	ForbiddenSources []string `json:"forbidden_sources"`
}

// Catalog is the whole tier data set.
type Catalog struct {
	Version int      `json:"version"`
	Tiers   []Tier   `json:"tiers"`
	Env     EnvRules `json:"env"`
	Paths   Paths    `json:"paths"`

	Syscalls SyscallCatalog `json:"-"`
}

// SyscallArg is one argument condition of a syscall rule, in the OCI
// seccomp vocabulary.
type SyscallArg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"value_two,omitempty"`
	Op       string `json:"op"`
}

// SyscallRule names syscalls, optionally only on some architectures
// (Go GOARCH names) and only when argument conditions hold.
type SyscallRule struct {
	Names  []string     `json:"names"`
	Arches []string     `json:"arches,omitempty"`
	Args   []SyscallArg `json:"args,omitempty"`
}

// SyscallGroup is a named set of rules sharing one action: "allow", or an
// errno name such as "EPERM" returned instead of running the call.
type SyscallGroup struct {
	Name   string        `json:"name"`
	Action string        `json:"action"`
	Why    string        `json:"why"`
	Rules  []SyscallRule `json:"rules"`
}

// SyscallCatalog is the syscall policy data.
type SyscallCatalog struct {
	Version int            `json:"version"`
	Groups  []SyscallGroup `json:"groups"`
}

// Errnos are the errno names a syscall group may return, with their Linux
// numbers (identical on amd64 and arm64).
var Errnos = map[string]uint{
	"EPERM":        1,
	"ENOSYS":       38,
	"EAFNOSUPPORT": 97,
}

// SeccompOps are the OCI argument comparison operators.
var SeccompOps = map[string]bool{
	"SCMP_CMP_NE": true, "SCMP_CMP_LT": true, "SCMP_CMP_LE": true, "SCMP_CMP_EQ": true,
	"SCMP_CMP_GE": true, "SCMP_CMP_GT": true, "SCMP_CMP_MASKED_EQ": true,
}

//go:embed tiers.json
var tiersJSON []byte

//go:embed syscalls.json
var syscallsJSON []byte

// builtin decodes the embedded catalog on first use, not at package init:
// every sbxrun process (including the container's init and exec shim)
// would otherwise pay for it at start.
var builtin = sync.OnceValue(func() *Catalog {
	c, err := Decode(tiersJSON, syscallsJSON)
	if err != nil {
		// The embedded data is part of the binary; tests decode it too, so
		// this only fires on a build from a broken tree.
		panic(fmt.Sprintf("embedded tier data: %v", err))
	}
	return c
})

// Builtin returns the embedded catalog. Callers must not modify it.
func Builtin() *Catalog { return builtin() }

// Lookup returns the named tier of the builtin catalog.
func Lookup(name string) (*Tier, bool) { return builtin().Tier(name) }

// Tier returns the named tier.
func (c *Catalog) Tier(name string) (*Tier, bool) {
	for i := range c.Tiers {
		if c.Tiers[i].Name == name {
			return &c.Tiers[i], true
		}
	}
	return nil, false
}

// Names returns the tier names ordered by level.
func (c *Catalog) Names() []string {
	out := make([]string, len(c.Tiers))
	for i, t := range c.Tiers {
		out[i] = t.Name
	}
	return out
}

// Group returns the named syscall group.
func (c *Catalog) Group(name string) (*SyscallGroup, bool) {
	for i := range c.Syscalls.Groups {
		if c.Syscalls.Groups[i].Name == name {
			return &c.Syscalls.Groups[i], true
		}
	}
	return nil, false
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON document")
	}
	return nil
}

// Decode parses and validates tier and syscall data. It is exported so the
// fuzz tests and `sbxrun profiles --check` exercise the same decoder as the
// embedded data.
func Decode(tiers, syscalls []byte) (*Catalog, error) {
	var c Catalog
	if err := decodeStrict(tiers, &c); err != nil {
		return nil, fmt.Errorf("decoding tiers: %w", err)
	}
	if err := decodeStrict(syscalls, &c.Syscalls); err != nil {
		return nil, fmt.Errorf("decoding syscalls: %w", err)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	sort.SliceStable(c.Tiers, func(i, j int) bool { return c.Tiers[i].Level < c.Tiers[j].Level })
	// Tiers are ordered: a higher level never grants less than a lower one,
	// so "moving up is a downgrade" means the same thing for every capability.
	for i := 1; i < len(c.Tiers); i++ {
		lo, hi := &c.Tiers[i-1], &c.Tiers[i]
		for _, capName := range Capabilities {
			a, _ := Rank(capName, lo.Access(capName))
			b, _ := Rank(capName, hi.Access(capName))
			if b < a {
				return nil, fmt.Errorf("tiers: %q (level %d) grants less %s than %q (level %d)", hi.Name, hi.Level, capName, lo.Name, lo.Level)
			}
		}
	}
	return &c, nil
}

var knownRlimits = map[string]bool{
	"RLIMIT_AS": true, "RLIMIT_CORE": true, "RLIMIT_CPU": true, "RLIMIT_DATA": true,
	"RLIMIT_FSIZE": true, "RLIMIT_LOCKS": true, "RLIMIT_MEMLOCK": true, "RLIMIT_MSGQUEUE": true,
	"RLIMIT_NICE": true, "RLIMIT_NOFILE": true, "RLIMIT_NPROC": true, "RLIMIT_RSS": true,
	"RLIMIT_RTPRIO": true, "RLIMIT_RTTIME": true, "RLIMIT_SIGPENDING": true, "RLIMIT_STACK": true,
}

// KnownRlimit reports whether name is an OCI rlimit type.
func KnownRlimit(name string) bool { return knownRlimits[name] }

var knownArches = map[string]bool{"amd64": true, "arm64": true}

// RuntimeReads are kernel files an OCI runtime reads inside the container
// after the masked paths are in place: libcontainer's init
// (moby/sys/capability) opens /proc/sys/kernel/cap_last_cap only then, and
// the container fails to start when it is gone. No tier may mask one of
// them or a directory above one.
var RuntimeReads = []string{"/proc/sys/kernel/cap_last_cap"}

// below reports whether p equals root or lies below it.
func below(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }

// validateMasked checks the paths t masks, the shared ones included: each
// a clean path inside /proc or /sys, none hiding what the runtime reads,
// and none equal to or below another masked path (by the time a runtime
// reaches it the directory above is an empty tmpfs, so the path does not
// exist and the runtime skips it without a word: the data would claim a
// mask that never happens).
func (c *Catalog) validateMasked(t *Tier) error {
	all := append([]string{}, c.Paths.Masked...)
	for _, set := range t.MaskedPaths {
		if set.Why == "" || len(set.Paths) == 0 {
			return fmt.Errorf("tiers: %q: a masked_paths set needs paths and a why", t.Name)
		}
		all = append(all, set.Paths...)
	}
	for i, p := range all {
		if path.Clean(p) != p || p == "/proc" || p == "/sys" || !below(p, "/proc") && !below(p, "/sys") {
			return fmt.Errorf("tiers: %q: masked path %q must be a clean path inside /proc or /sys", t.Name, p)
		}
		for _, r := range RuntimeReads {
			if below(r, p) {
				return fmt.Errorf("tiers: %q: masking %s hides %s, which the runtime reads while it starts the container", t.Name, p, r)
			}
		}
		for j, q := range all {
			if i != j && below(p, q) {
				return fmt.Errorf("tiers: %q: masked path %s is listed twice or lies below masked %s", t.Name, p, q)
			}
		}
	}
	return nil
}

func (c *Catalog) validate() error {
	if c.Version != 1 {
		return fmt.Errorf("tiers: unsupported version %d", c.Version)
	}
	if c.Syscalls.Version != 1 {
		return fmt.Errorf("syscalls: unsupported version %d", c.Syscalls.Version)
	}
	groups := map[string]bool{}
	for _, g := range c.Syscalls.Groups {
		if g.Name == "" || groups[g.Name] {
			return fmt.Errorf("syscalls: group name %q empty or duplicated", g.Name)
		}
		groups[g.Name] = true
		if g.Why == "" {
			return fmt.Errorf("syscalls: group %q has no why", g.Name)
		}
		if _, ok := Errnos[g.Action]; !ok && g.Action != "allow" {
			return fmt.Errorf("syscalls: group %q: unknown action %q", g.Name, g.Action)
		}
		if len(g.Rules) == 0 {
			return fmt.Errorf("syscalls: group %q has no rules", g.Name)
		}
		for _, r := range g.Rules {
			if len(r.Names) == 0 {
				return fmt.Errorf("syscalls: group %q: rule without names", g.Name)
			}
			for _, a := range r.Arches {
				if !knownArches[a] {
					return fmt.Errorf("syscalls: group %q: unknown arch %q", g.Name, a)
				}
			}
			var argSeen [6]bool
			for _, a := range r.Args {
				if !SeccompOps[a.Op] || a.Index > 5 {
					return fmt.Errorf("syscalls: group %q: bad argument condition %+v", g.Name, a)
				}
				if argSeen[a.Index] {
					// libcontainer turns conditions that share an argument
					// into separate rules (OR) where libseccomp would AND
					// them: the rule would mean different things to
					// different runtimes. Write one rule per alternative.
					return fmt.Errorf("syscalls: group %q: two conditions on argument %d of %v", g.Name, a.Index, r.Names)
				}
				argSeen[a.Index] = true
			}
		}
	}
	seen := map[string]bool{}
	levelSeen := map[int]bool{}
	for _, t := range c.Tiers {
		if t.Name == "" || seen[t.Name] {
			return fmt.Errorf("tiers: name %q empty or duplicated", t.Name)
		}
		seen[t.Name] = true
		if levelSeen[t.Level] {
			// Levels form a strict order: a move between two tiers is always
			// a tightening or a loosening, never ambiguous.
			return fmt.Errorf("tiers: %q: level %d used twice", t.Name, t.Level)
		}
		levelSeen[t.Level] = true
		if len(t.Capabilities) != len(Capabilities) {
			return fmt.Errorf("tiers: %q must grant exactly the %d capabilities", t.Name, len(Capabilities))
		}
		for capName, g := range t.Capabilities {
			if _, ok := levels[capName]; !ok {
				return fmt.Errorf("tiers: %q: unknown capability %q", t.Name, capName)
			}
			if _, ok := Rank(capName, g.Access); !ok {
				return fmt.Errorf("tiers: %q: %s cannot be %q (allowed: %v)", t.Name, capName, g.Access, levels[capName])
			}
			if g.Why == "" {
				return fmt.Errorf("tiers: %q: %s has no why", t.Name, capName)
			}
		}
		for _, gname := range t.SyscallGroups {
			if !groups[gname] {
				return fmt.Errorf("tiers: %q: unknown syscall group %q", t.Name, gname)
			}
		}
		for _, r := range t.Rlimits {
			if !knownRlimits[r.Type] || r.Soft > r.Hard || r.Why == "" {
				return fmt.Errorf("tiers: %q: bad rlimit %+v", t.Name, r)
			}
		}
		if t.Limits.MemoryBytes <= 0 || t.Limits.Pids <= 0 || t.Limits.CPUMillis <= 0 || t.Limits.TmpBytes <= 0 {
			return fmt.Errorf("tiers: %q: every limit must be positive", t.Name)
		}
		if t.RunAs.Why == "" {
			return fmt.Errorf("tiers: %q: run_as has no why", t.Name)
		}
		if err := c.validateMasked(&t); err != nil {
			return err
		}
	}
	if len(c.Tiers) == 0 {
		return fmt.Errorf("tiers: none defined")
	}
	return nil
}
