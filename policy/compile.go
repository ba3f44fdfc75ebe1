package policy

import (
	"errors"
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/profiles"
)

// ErrNeedsOverride is wrapped by the error of a config whose only problem
// is that it widens its tier: an override authorization would let it
// compile. Callers verify (and spend) an override token only for it.
var ErrNeedsOverride = errors.New("the config widens its tier")

// Authorization is a verified override: package authz checked a
// token against the root-owned store before building one. Compile only
// records its label; it never sees the token.
type Authorization struct {
	Label string
}

// Defaults that are not tier data because they are mechanism, not policy.
const (
	defaultHostname = "sbx"
	// defaultUserNSHostID is the first host id of the range a rootful user
	// namespace maps to: above the ranges useradd hands out (/etc/subuid
	// starts at 100000) and systemd-nspawn's (up to 0x6FFFFFFF), so no host
	// account owns these ids.
	defaultUserNSHostID = 0x70000000
	userNSSize          = 65536
	cpuPeriodUs         = 100000
	scopedShmBytes      = 64 << 20
	// deniedShmBytes: /dev/shm stays as a read-only, nearly empty tmpfs so
	// programs that stat it do not fail, while nothing can be shared there.
	deniedShmBytes = 4096
	maxPathLen     = 4096
)

type compiler struct {
	cat        *profiles.Catalog
	tier       *profiles.Tier
	cfg        *Config
	facts      HostFacts
	g          *Grants
	widenings  []string
	conflicts  []string
	invalid    []string
	groupNames []string
}

// Compile turns a tier and a config into Grants. It is pure and
// deterministic: the same tier, config and facts give equal Grants, whatever
// the order of maps and lists in the config. A config may narrow the tier
// freely; anything that widens it is refused with SANDBOX_POLICY_CONFLICT
// unless auth is non-nil, in which case the widening is recorded in
// Grants.Override for the audit log.
func Compile(tierName string, cfg *Config, facts HostFacts, auth *Authorization) (*Grants, error) {
	return CompileWith(profiles.Builtin(), tierName, cfg, facts, auth)
}

// CompileWith is Compile against a given catalog (tests, linting of data).
func CompileWith(cat *profiles.Catalog, tierName string, cfg *Config, facts HostFacts, auth *Authorization) (*Grants, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if tierName == "" {
		tierName = cfg.Tier
	}
	if tierName == "" {
		return nil, errcode.Errorf(errcode.ProfileUnknown, "no tier given (one of %s)", strings.Join(cat.Names(), ", "))
	}
	if cfg.Tier != "" && cfg.Tier != tierName {
		return nil, errcode.Errorf(errcode.PolicyConflict, "config is written for tier %q but tier %q was requested", cfg.Tier, tierName)
	}
	tier, ok := cat.Tier(tierName)
	if !ok {
		return nil, errcode.Errorf(errcode.ProfileUnknown, "unknown tier %q (one of %s)", tierName, strings.Join(cat.Names(), ", "))
	}
	if facts.Arch != "amd64" && facts.Arch != "arm64" {
		return nil, errcode.Errorf(errcode.CompileError, "unsupported architecture %q (amd64 and arm64 are supported)", facts.Arch)
	}
	if facts.Syscalls == nil {
		return nil, errcode.Errorf(errcode.CompileError, "no syscall table for %s: syscall names cannot be validated", facts.Arch)
	}
	c := &compiler{cat: cat, tier: tier, cfg: cfg, facts: facts, g: &Grants{
		Version: GrantsVersion, Tier: tier.Name, Level: tier.Level, Arch: facts.Arch, Rootless: facts.Rootless,
	}}
	c.access()
	c.identity()
	c.isolation()
	c.fs()
	c.network()
	c.env()
	c.limits()
	c.ipc()
	c.process()
	if err := c.syscalls(); err != nil {
		return nil, err
	}
	c.unenforced()

	if len(c.invalid) > 0 {
		sort.Strings(c.invalid)
		return nil, &errcode.Error{Code: errcode.ConfigInvalid, Msg: "config is malformed", Details: c.invalid}
	}
	if len(c.conflicts) > 0 {
		sort.Strings(c.conflicts)
		return nil, &errcode.Error{Code: errcode.PolicyConflict, Msg: fmt.Sprintf("config conflicts with tier %s", tier.Name), Details: c.conflicts}
	}
	if len(c.widenings) > 0 {
		sort.Strings(c.widenings)
		if auth == nil {
			return nil, &errcode.Error{Code: errcode.PolicyConflict,
				Msg:     fmt.Sprintf("config widens tier %s and carries no override authorization", tier.Name),
				Details: c.widenings, Err: ErrNeedsOverride}
		}
		c.g.Override = &AppliedOverride{Label: auth.Label, Widenings: c.widenings}
	}
	sort.Strings(c.g.Notes)
	sort.Strings(c.g.Unenforced)
	return c.g, nil
}

func (c *compiler) widen(format string, args ...any) {
	c.widenings = append(c.widenings, fmt.Sprintf(format, args...))
}

func (c *compiler) conflict(format string, args ...any) {
	c.conflicts = append(c.conflicts, fmt.Sprintf(format, args...))
}

func (c *compiler) bad(format string, args ...any) {
	c.invalid = append(c.invalid, fmt.Sprintf(format, args...))
}

func (c *compiler) note(format string, args ...any) {
	c.g.Notes = append(c.g.Notes, fmt.Sprintf(format, args...))
}

func (c *compiler) access() {
	for _, capName := range profiles.Capabilities {
		c.g.Access.set(capName, c.tier.Access(capName))
	}
	keys := make([]string, 0, len(c.cfg.Capabilities))
	for k := range c.cfg.Capabilities {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, k := range keys {
		capName := profiles.Capability(k)
		want := c.cfg.Capabilities[capName]
		if _, known := profiles.Rank(capName, profiles.Deny); !known {
			c.bad("capabilities.%s: unknown capability", k)
			continue
		}
		wr, ok := profiles.Rank(capName, want)
		if !ok {
			c.bad("capabilities.%s: %q is not a level of %s (one of %v)", k, want, k, profiles.Levels(capName))
			continue
		}
		tr, _ := profiles.Rank(capName, c.tier.Access(capName))
		if wr > tr {
			c.widen("capabilities.%s: %s is wider than the tier's %s", k, want, c.tier.Access(capName))
		}
		c.g.Access.set(capName, want)
	}
	a := c.g.Access
	if a.FSWrite != profiles.Deny && a.FSRead == profiles.Deny {
		c.conflict("fs_write=%s contradicts fs_read=deny: nothing can be written that cannot be read", a.FSWrite)
	}
}

func (c *compiler) identity() {
	id := &c.g.Identity
	id.UID, id.GID = c.tier.RunAs.UID, c.tier.RunAs.GID
	id.Capabilities = append([]string{}, c.tier.LinuxCapabilities...)
	sort.Strings(id.Capabilities)
	// no_new_privileges in every tier: without it a setuid binary in the
	// image undoes the capability drop, and seccomp needs it unprivileged.
	id.NoNewPrivileges = true
	id.UserNamespace = c.tier.UserNamespace || c.facts.Rootless
	switch {
	case c.facts.Rootless:
		id.UIDMap = &IDMap{ContainerID: 0, HostID: c.facts.UID, Size: 1}
		id.GIDMap = &IDMap{ContainerID: 0, HostID: c.facts.GID, Size: 1}
		if id.UID != 0 || id.GID != 0 {
			c.note("rootless: a single-id map has only container id 0 (host uid %d); running as it instead of %d:%d", c.facts.UID, id.UID, id.GID)
			id.UID, id.GID = 0, 0
		}
	case id.UserNamespace:
		host := uint32(defaultUserNSHostID)
		if c.cfg.UserNS.HostID != 0 {
			host = c.cfg.UserNS.HostID
		}
		if uint64(host)+userNSSize > 1<<32-1 {
			c.bad("userns.host_id %d: the %d-id range would pass the largest uid", host, userNSSize)
		}
		id.UIDMap = &IDMap{ContainerID: 0, HostID: host, Size: userNSSize}
		id.GIDMap = &IDMap{ContainerID: 0, HostID: host, Size: userNSSize}
	}
}

func (c *compiler) isolation() {
	is := &c.g.Isolate
	is.HostNetwork = c.g.Access.NetworkAccess == profiles.Allow
	is.HostIPC = c.g.Access.IPC == profiles.Allow
	is.Hostname = defaultHostname
	if h := c.cfg.Hostname; h != "" {
		if !validHostname(h) {
			c.bad("hostname %q: want 1-63 letters, digits or '-'", h)
		}
		is.Hostname = h
	}
	is.MountSysfs = c.tier.MountSysfs
	masked := append([]string{}, c.cat.Paths.Masked...)
	for _, set := range c.tier.MaskedPaths {
		masked = append(masked, set.Paths...)
	}
	ro := append([]string{}, c.cat.Paths.Readonly...)
	sort.Strings(masked)
	sort.Strings(ro)
	is.MaskedPaths, is.ReadonlyPaths = masked, ro
}

func validHostname(h string) bool {
	if len(h) == 0 || len(h) > 63 || h[0] == '-' {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// CheckPath validates a path as sbxrun requires it in configs: absolute,
// already clean (no "..", "//" or trailing "/"), no control characters.
// Paths are compared lexically here; the runtime resolves them with
// fd-based APIs when mounting.
func CheckPath(p string) error {
	if p == "" {
		return fmt.Errorf("empty path")
	}
	if len(p) > maxPathLen {
		return fmt.Errorf("path longer than %d bytes", maxPathLen)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("path %q contains a control character", p)
		}
	}
	if !path.IsAbs(p) {
		return fmt.Errorf("path %q is not absolute", p)
	}
	if path.Clean(p) != p {
		return fmt.Errorf("path %q is not clean (want %q)", p, path.Clean(p))
	}
	return nil
}

// Within reports whether the clean absolute path p equals root or lies
// below it (lexically).
func Within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// reservedDestinations are where no host path may be mounted: kernel
// interfaces the runtime sets up itself, and the rootfs as a whole.
var reservedDestinations = []string{"/proc", "/sys", "/dev"}

// forbidden are the host paths no sandbox may see: the catalog's, and
// this installation's own state.
func (c *compiler) forbidden() []string {
	var state []string
	for _, p := range c.facts.StatePaths {
		if CheckPath(p) == nil {
			state = append(state, p)
		}
	}
	return sortedSet(append(append([]string{}, c.cat.Paths.ForbiddenSources...), state...))
}

func (c *compiler) checkSource(field, src string) bool {
	if err := CheckPath(src); err != nil {
		c.bad("%s: %v", field, err)
		return false
	}
	for _, f := range c.forbidden() {
		if Within(src, f) || Within(f, src) {
			c.conflict("%s: %s exposes %s, which no tier may mount (engine sockets, kernel interfaces and sbxrun's own state are root on the host)", field, src, f)
			return false
		}
	}
	return true
}

func (c *compiler) checkDest(field, dst string) bool {
	if err := CheckPath(dst); err != nil {
		c.bad("%s: %v", field, err)
		return false
	}
	if dst == "/" {
		c.conflict("%s: a host path cannot replace the rootfs", field)
		return false
	}
	for _, r := range reservedDestinations {
		if Within(dst, r) {
			c.conflict("%s: %s is under %s, which the runtime owns", field, dst, r)
			return false
		}
	}
	return true
}

func (c *compiler) fs() {
	a := c.g.Access
	c.g.FS.RootfsReadonly = a.FSWrite != profiles.Allow
	c.g.FS.TmpNoexec = a.ProcessExec == profiles.Deny
	dests := map[string]string{}
	add := func(field string, m PathMount, writable, system bool) {
		if !c.checkSource(field+".source", m.Source) {
			return
		}
		dst := m.Destination
		if dst == "" {
			dst = m.Source
		}
		if !c.checkDest(field+".destination", dst) {
			return
		}
		if prev, dup := dests[dst]; dup {
			if prev == m.Source {
				return // the same mount declared twice (e.g. read and write): keep the first
			}
			c.conflict("%s.destination: %s is declared twice (%s and %s)", field, dst, prev, m.Source)
			return
		}
		dests[dst] = m.Source
		c.g.FS.Paths = append(c.g.FS.Paths, PathGrant{Source: m.Source, Destination: dst, Writable: writable, System: system})
	}
	// Writes first so that a path declared both ways is mounted writable.
	if len(c.cfg.FS.Write) > 0 && a.FSWrite == profiles.Deny {
		c.conflict("fs.write declares %d path(s) but fs_write is deny", len(c.cfg.FS.Write))
	} else {
		for i, m := range c.cfg.FS.Write {
			field := fmt.Sprintf("fs.write[%d]", i)
			inside := false
			for _, r := range c.cfg.FS.Read {
				if Within(m.Source, r.Source) {
					inside = true
				}
			}
			if !inside {
				c.conflict("%s: %s is not inside any fs.read path: a sandbox may only write where it may read", field, m.Source)
				continue
			}
			add(field, m, true, false)
		}
	}
	if len(c.cfg.FS.Read) > 0 && a.FSRead == profiles.Deny {
		c.conflict("fs.read declares %d path(s) but fs_read is deny", len(c.cfg.FS.Read))
	} else {
		for i, m := range c.cfg.FS.Read {
			add(fmt.Sprintf("fs.read[%d]", i), m, false, false)
		}
	}
	if a.FSRead == profiles.Allow {
		for _, d := range c.facts.HostSystemDirs {
			add("host_system_dirs", PathMount{Source: d, Destination: "/run/host" + d}, false, true)
		}
	}
	sort.Slice(c.g.FS.Paths, func(i, j int) bool { return c.g.FS.Paths[i].Destination < c.g.FS.Paths[j].Destination })
	c.g.FS.Forbidden = c.forbidden()
}

// CheckHostPort validates an allowlist entry: host:port, where host is an IP
// address, a DNS name, or "*." followed by a DNS name.
func CheckHostPort(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("%q: want host:port", s)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
		return "", fmt.Errorf("%q: port must be 1-65535", s)
	}
	if ip := net.ParseIP(host); ip != nil {
		return net.JoinHostPort(ip.String(), port), nil
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	labels := strings.TrimPrefix(name, "*.")
	if len(labels) == 0 || len(labels) > 253 {
		return "", fmt.Errorf("%q: bad host name", s)
	}
	for _, l := range strings.Split(labels, ".") {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("%q: bad host name", s)
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return "", fmt.Errorf("%q: bad host name", s)
			}
		}
	}
	return net.JoinHostPort(name, port), nil
}

func (c *compiler) network() {
	switch c.g.Access.NetworkAccess {
	case profiles.Deny:
		c.g.Net.Mode = "none"
	case profiles.Filtered:
		c.g.Net.Mode = "proxy"
	case profiles.Allow:
		c.g.Net.Mode = "host"
	}
	if len(c.cfg.Network.Allow) == 0 {
		return
	}
	if c.g.Net.Mode != "proxy" {
		c.conflict("network.allow lists %d destination(s) but network_access is %s, not filtered", len(c.cfg.Network.Allow), c.g.Access.NetworkAccess)
		return
	}
	seen := map[string]bool{}
	for i, e := range c.cfg.Network.Allow {
		norm, err := CheckHostPort(e)
		if err != nil {
			c.bad("network.allow[%d]: %v", i, err)
			continue
		}
		if !seen[norm] {
			seen[norm] = true
			c.g.Net.Allow = append(c.g.Net.Allow, norm)
		}
	}
	sort.Strings(c.g.Net.Allow)
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// env compiles the environment: the baseline, plus every variable the
// config declares that passes the tier's filter. The filter is compiled
// into the grants so the runtime applies the same rule to incoming specs.
func (c *compiler) env() {
	declared := c.declaredEnv()
	f := c.envFilter(declared)
	vars := map[string]string{}
	for _, b := range c.cat.Env.Baseline {
		vars[b.Name] = b.Value
	}
	var dropped []string
	for n, v := range declared {
		if f.Check(n) != EnvPass {
			dropped = append(dropped, n)
			continue
		}
		vars[n] = v
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	c.g.Env.Vars = make([]EnvVar, 0, len(names))
	for _, n := range names {
		c.g.Env.Vars = append(c.g.Env.Vars, EnvVar{Name: n, Value: vars[n]})
	}
	sort.Strings(dropped)
	c.g.Env.Dropped = dropped
	c.g.Env.Filter = f
	if len(dropped) > 0 {
		c.note("env: dropped %d variable(s) by the credential filter or env.deny: %s", len(dropped), strings.Join(dropped, ", "))
	}
}

// declaredEnv returns what the config asks to pass: env.set values, names
// matching env.pass from the caller's environment, and at filtered the
// tier's pass-through names (LANG, TERM, …) from the caller's environment.
// Malformed entries are reported and skipped.
func (c *compiler) declaredEnv() map[string]string {
	declared := map[string]string{}
	for n, v := range c.cfg.Env.Set {
		if !validEnvName(n) || strings.ContainsRune(v, 0) {
			c.bad("env.set: %q is not a variable name or its value has a NUL", n)
			continue
		}
		declared[n] = v
	}
	fromCaller := func(patterns []string) {
		for n, v := range c.facts.Env {
			if _, set := declared[n]; !set && MatchAny(n, patterns) {
				declared[n] = v
			}
		}
	}
	for i, p := range c.cfg.Env.Pass {
		if _, err := path.Match(p, ""); err != nil {
			c.bad("env.pass[%d]: bad pattern %q", i, p)
			continue
		}
		fromCaller([]string{p})
	}
	if c.g.Access.EnvAccess == profiles.Filtered {
		fromCaller(c.cat.Env.FilteredPass)
	}
	return declared
}

// envFilter builds the tier's filter, narrowed or (with an override)
// widened by the config.
func (c *compiler) envFilter(declared map[string]string) EnvFilter {
	mode := c.g.Access.EnvAccess
	f := EnvFilter{Mode: mode, Secret: append([]string{}, c.cat.Env.SecretPatterns...)}
	for _, b := range c.cat.Env.Baseline {
		f.Keep = append(f.Keep, b.Name)
	}
	f.Keep = append(f.Keep, c.cat.Env.EngineNames...)
	if mode == profiles.Deny && (len(c.cfg.Env.Set) > 0 || len(c.cfg.Env.Pass) > 0) {
		// With an override the declared names are kept; the credential
		// filter still applies to them.
		c.widen("env: variables declared but env_access is deny")
		for n := range declared {
			f.Keep = append(f.Keep, n)
		}
	}
	for i, p := range c.cfg.Env.Deny {
		if _, err := path.Match(p, ""); err != nil {
			c.bad("env.deny[%d]: bad pattern %q", i, p)
			continue
		}
		f.Deny = append(f.Deny, p)
	}
	for i, n := range c.cfg.Env.Allow {
		if !validEnvName(n) {
			c.bad("env.allow[%d]: %q is not a variable name", i, n)
			continue
		}
		if mode != profiles.Allow && LooksSecret(n, f.Secret) {
			c.widen("env.allow: %s matches a credential pattern and would pass the filter", n)
		}
		f.Allow = append(f.Allow, n)
	}
	f.Keep, f.Secret, f.Allow, f.Deny = sortedSet(f.Keep), sortedSet(f.Secret), sortedSet(f.Allow), sortedSet(f.Deny)
	return f
}

func sortedSet(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// MinMemoryBytes is the smallest memory limit a sandbox may have: below it
// the container's init cannot start, so the kernel would kill it while the
// runtime sets it up (the same floor as docker's).
const MinMemoryBytes = 6 << 20

// limits compiles the cgroup ceilings and the rlimits.
func (c *compiler) limits() {
	c.cgroupLimits()
	c.rlimits()
}

func (c *compiler) cgroupLimits() {
	l := &c.g.Limits
	t := c.tier.Limits
	l.MemoryBytes, l.Pids, l.TmpBytes = t.MemoryBytes, t.Pids, t.TmpBytes
	cpuMillis := t.CPUMillis
	lower := func(name string, cur *int64, want int64) {
		if want == 0 {
			return
		}
		if want < 0 {
			c.bad("limits.%s: must be positive", name)
			return
		}
		if want > *cur {
			c.widen("limits.%s: %d is above the tier's %d", name, want, *cur)
		}
		*cur = want
	}
	lower("memory", &l.MemoryBytes, int64(c.cfg.Limits.Memory))
	lower("pids", &l.Pids, c.cfg.Limits.Pids)
	lower("tmp", &l.TmpBytes, int64(c.cfg.Limits.Tmp))
	lower("cpus", &cpuMillis, int64(c.cfg.Limits.CPUs))
	if l.MemoryBytes < MinMemoryBytes {
		c.bad("limits.memory: %d is below the minimum of %d bytes a container needs to start", l.MemoryBytes, MinMemoryBytes)
	}
	l.CPUPeriod = cpuPeriodUs
	l.CPUQuota = cpuMillis * cpuPeriodUs / 1000
	l.Cgroups = c.facts.CgroupLimits
	if l.Cgroups && c.facts.SwapAccounting {
		// memory+swap equal to memory: the sandbox cannot spill to swap.
		l.SwapBytes = l.MemoryBytes
	}
	if !l.Cgroups {
		c.note("limits: no cgroup limits on this host; pids limit %d applied as RLIMIT_NPROC", l.Pids)
		c.g.Unenforced = append(c.g.Unenforced,
			fmt.Sprintf("limits.memory=%d: not enforced, no cgroup delegation for this caller", l.MemoryBytes),
			fmt.Sprintf("limits.cpus=%d/1000: not enforced, no cgroup delegation for this caller", cpuMillis))
	}
}

// rlimits compiles the tier's rlimits, lowered by the config and capped at
// the host's hard limits, which no process can raise.
func (c *compiler) rlimits() {
	l := &c.g.Limits
	rl := map[string]Rlimit{}
	tierHas := map[string]uint64{}
	for _, r := range c.tier.Rlimits {
		rl[r.Type] = Rlimit{Type: r.Type, Soft: r.Soft, Hard: r.Hard}
		tierHas[r.Type] = r.Hard
	}
	types := make([]string, 0, len(c.cfg.Rlimits))
	for k := range c.cfg.Rlimits {
		types = append(types, k)
	}
	sort.Strings(types)
	for _, typ := range types {
		want := c.cfg.Rlimits[typ]
		if !profiles.KnownRlimit(typ) {
			c.bad("rlimits.%s: unknown rlimit type", typ)
			continue
		}
		if want.Soft > want.Hard {
			c.bad("rlimits.%s: soft %d is above hard %d", typ, want.Soft, want.Hard)
			continue
		}
		if hostHard, ok := c.facts.HardRlimits[typ]; ok && want.Hard > hostHard {
			c.conflict("rlimits.%s: hard %d is above the host's hard limit %d, which the kernel will not raise", typ, want.Hard, hostHard)
			continue
		}
		if th, ok := tierHas[typ]; ok && want.Hard > th {
			c.widen("rlimits.%s: hard %d is above the tier's %d", typ, want.Hard, th)
		}
		rl[typ] = Rlimit{Type: typ, Soft: want.Soft, Hard: want.Hard}
	}
	if !l.Cgroups {
		// No pids cgroup here: the ceiling comes from RLIMIT_NPROC, which
		// the kernel counts per user namespace.
		if cur, ok := rl["RLIMIT_NPROC"]; !ok || cur.Hard > uint64(l.Pids) {
			rl["RLIMIT_NPROC"] = Rlimit{Type: "RLIMIT_NPROC", Soft: uint64(l.Pids), Hard: uint64(l.Pids)}
		}
	}
	if r, ok := rl["RLIMIT_NPROC"]; ok && c.g.Identity.UID == 0 && !c.g.Identity.UserNamespace {
		// Without a user namespace container uid 0 is host root, whose
		// process count includes every host daemon: the limit would either
		// break the sandbox or mean nothing. The pids cgroup covers it.
		delete(rl, "RLIMIT_NPROC")
		c.note("limits: RLIMIT_NPROC %d not set: container uid 0 shares host root's process count; the pids cgroup limits processes", r.Hard)
	}
	for typ, r := range rl {
		if hostHard, ok := c.facts.HardRlimits[typ]; ok && r.Hard > hostHard {
			c.note("limits: %s lowered from %d to the host's hard limit %d", typ, r.Hard, hostHard)
			r.Hard = hostHard
			r.Soft = min(r.Soft, r.Hard)
			rl[typ] = r
		}
	}
	l.Rlimits = make([]Rlimit, 0, len(rl))
	for _, r := range rl {
		l.Rlimits = append(l.Rlimits, r)
	}
	sort.Slice(l.Rlimits, func(i, j int) bool { return l.Rlimits[i].Type < l.Rlimits[j].Type })
}

// ipc compiles the IPC decisions: System V and mqueue syscalls and a
// writable /dev/shm only below ipc=deny.
func (c *compiler) ipc() {
	allowed := c.g.Access.IPC != profiles.Deny
	c.g.IPC = IPCGrants{Syscalls: allowed, ShmWritable: allowed}
	c.g.Limits.ShmBytes = deniedShmBytes
	if allowed {
		c.g.Limits.ShmBytes = scopedShmBytes
	}
}

func (c *compiler) process() {
	p := &c.g.Process
	p.Args = append([]string{}, c.cfg.Process.Args...)
	if len(p.Args) == 0 {
		p.Args = []string{"sh"}
	}
	if p.Args[0] == "" {
		c.bad("process.args[0] is empty")
	}
	for i, a := range p.Args {
		if strings.ContainsRune(a, 0) {
			c.bad("process.args[%d] contains a NUL byte", i)
		}
	}
	p.Cwd = "/"
	if c.cfg.Process.Cwd != "" {
		if err := CheckPath(c.cfg.Process.Cwd); err != nil {
			c.bad("process.cwd: %v", err)
		}
		p.Cwd = c.cfg.Process.Cwd
	}
	p.Terminal = c.cfg.Process.Terminal
}

func (c *compiler) unenforced() {
	a := c.g.Access
	if a.ProcessExec == profiles.Deny {
		c.g.Exec.InitialOnly = true
		msg := "process_exec=deny: enforced only by the sbxrun runtime (Landlock exec restriction in its init); another runtime runs this spec without it"
		if c.facts.LandlockABI == 0 {
			msg = "process_exec=deny: this kernel has no Landlock, so exec cannot be restricted; the sbxrun runtime refuses to run it"
		}
		c.g.Unenforced = append(c.g.Unenforced, msg)
	}
	if a.NetworkAccess == profiles.Filtered {
		c.g.Unenforced = append(c.g.Unenforced, "network_access=filtered: egress is possible only through the sbxrun allowlist proxy; without it the sandbox has no egress at all")
	}
	if b := c.tier.HardenedBackend; b != nil {
		// Nothing in sbxrun starts the backend yet: the tier's data names
		// it, so the grants must say it is not in use rather than leave a
		// reader to assume it is.
		c.g.Unenforced = append(c.g.Unenforced, fmt.Sprintf("hardened_backend=%s: not used; no sbxrun component runs %s yet, so %s runs on the host kernel with the tier's own namespace, syscall and /proc/sys hardening", b.Name, b.Name, c.tier.Name))
	}
}
