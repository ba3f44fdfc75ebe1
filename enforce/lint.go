// Package enforce checks incoming OCI specs against a tier. Lint lists
// every way a spec grants more than the tier's Grants allow, each with a
// stable code and the JSON path of the offending field; `sbxrun lint` is the
// CI gate built on it, and the runtime's create/run refuses or rewrites a
// spec with the same rules.
package enforce

import (
	"fmt"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/specgen"
)

// Violation is one way a spec exceeds a tier.
type Violation struct {
	Code string `json:"code"`
	Path string `json:"path"`
	Msg  string `json:"message"`
}

func (v Violation) String() string { return v.Code + " " + v.Path + ": " + v.Msg }

// Violation codes (docs/errors.md lists them with meanings).
const (
	VProcessMissing   = "LINT_PROCESS_MISSING"
	VNoNewPrivs       = "LINT_NO_NEW_PRIVILEGES"
	VCapability       = "LINT_CAPABILITY"
	VUser             = "LINT_USER"
	VRlimitMissing    = "LINT_RLIMIT_MISSING"
	VRlimitExcess     = "LINT_RLIMIT_EXCESS"
	VEnvSecret        = "LINT_ENV_SECRET"
	VEnvNotAllowed    = "LINT_ENV_NOT_ALLOWED"
	VRootfsWritable   = "LINT_ROOTFS_WRITABLE"
	VNamespaceMissing = "LINT_NAMESPACE_MISSING"
	VNamespaceShared  = "LINT_NAMESPACE_SHARED"
	VUserNSRoot       = "LINT_USERNS_HOST_ROOT"
	VSeccompMissing   = "LINT_SECCOMP_MISSING"
	VSeccompDefault   = "LINT_SECCOMP_DEFAULT"
	VSeccompWider     = "LINT_SECCOMP_WIDER"
	VSeccompArch      = "LINT_SECCOMP_ARCH"
	VSeccompFlag      = "LINT_SECCOMP_FLAG"
	VMountForbidden   = "LINT_MOUNT_FORBIDDEN"
	VMountHostPath    = "LINT_MOUNT_HOST_PATH"
	VMountWritable    = "LINT_MOUNT_WRITABLE"
	VMountOptions     = "LINT_MOUNT_OPTIONS"
	VMountPropagation = "LINT_MOUNT_PROPAGATION"
	VSysWritable      = "LINT_SYS_WRITABLE"
	VMaskedMissing    = "LINT_MASKED_PATH_MISSING"
	VReadonlyMissing  = "LINT_READONLY_PATH_MISSING"
	VCgroupLimit      = "LINT_CGROUP_LIMIT"
	VDevice           = "LINT_DEVICE"
	VSysctl           = "LINT_SYSCTL"
	VHook             = "LINT_HOOK"
	VScheduler        = "LINT_SCHEDULER"
	VOOMScore         = "LINT_OOM_SCORE"
	VNetDevice        = "LINT_NET_DEVICE"
	VReference        = "LINT_REFERENCE_UNAVAILABLE"
)

type linter struct {
	s   *specs.Spec
	g   *policy.Grants
	ref *specs.Spec // the tier's own spec, what compliant fields look like
	out []Violation
}

func (l *linter) add(code, path, format string, args ...any) {
	l.out = append(l.out, Violation{Code: code, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Lint returns every violation of g by s, in a stable order (by JSON path,
// then code).
func Lint(s *specs.Spec, g *policy.Grants) []Violation {
	ref, err := specgen.Generate(g, specgen.Options{})
	if err != nil {
		// Without the tier's own spec nothing can be compared: fail closed.
		return []Violation{{Code: VReference, Path: "$", Msg: fmt.Sprintf("tier %s cannot be compiled here: %v", g.Tier, err)}}
	}
	l := &linter{s: s, g: g, ref: ref}
	l.process()
	l.root()
	l.namespaces()
	l.seccomp()
	l.mounts()
	l.paths()
	l.resources()
	l.misc()
	sort.SliceStable(l.out, func(i, j int) bool {
		if l.out[i].Path != l.out[j].Path {
			return l.out[i].Path < l.out[j].Path
		}
		return l.out[i].Code < l.out[j].Code
	})
	return l.out
}

func (l *linter) process() {
	p := l.s.Process
	if p == nil {
		l.add(VProcessMissing, "$.process", "a spec without a process cannot be checked")
		return
	}
	if !p.NoNewPrivileges && l.g.Identity.NoNewPrivileges {
		l.add(VNoNewPrivs, "$.process.noNewPrivileges", "must be true: without it setuid binaries regain privileges")
	}
	allowed := map[string]bool{}
	for _, c := range l.g.Identity.Capabilities {
		allowed[c] = true
	}
	if c := p.Capabilities; c != nil {
		sets := []struct {
			name string
			caps []string
			none bool
		}{{"bounding", c.Bounding, false}, {"effective", c.Effective, false}, {"permitted", c.Permitted, false},
			{"inheritable", c.Inheritable, true}, {"ambient", c.Ambient, true}}
		for _, set := range sets {
			for i, name := range set.caps {
				if set.none || !allowed[name] {
					l.add(VCapability, fmt.Sprintf("$.process.capabilities.%s[%d]", set.name, i), "%s is not granted by tier %s", name, l.g.Tier)
				}
			}
		}
	}
	if l.g.Identity.UID != 0 && p.User.UID == 0 && !hasNamespace(l.s, specs.UserNamespace) {
		l.add(VUser, "$.process.user.uid", "tier %s runs as uid %d; uid 0 without a user namespace is host root", l.g.Tier, l.g.Identity.UID)
	}
	if s := p.Scheduler; s != nil && (s.Policy != specs.SchedOther && s.Policy != specs.SchedBatch && s.Policy != specs.SchedIdle || s.Nice < 0) {
		l.add(VScheduler, "$.process.scheduler", "%s nice %d raises the priority above what tier %s grants (no CAP_SYS_NICE)", s.Policy, s.Nice, l.g.Tier)
	}
	if io := p.IOPriority; io != nil && io.Class == specs.IOPRIO_CLASS_RT {
		l.add(VScheduler, "$.process.ioPriority.class", "the realtime I/O class can starve the host's I/O")
	}
	if p.OOMScoreAdj != nil && *p.OOMScoreAdj < 0 {
		l.add(VOOMScore, "$.process.oomScoreAdj", "%d shields the sandbox from the OOM killer", *p.OOMScoreAdj)
	}
	l.rlimits(p)
	l.env(p)
}

func (l *linter) rlimits(p *specs.Process) {
	have := map[string]int{}
	for i, r := range p.Rlimits {
		have[r.Type] = i
	}
	for _, want := range l.g.Limits.Rlimits {
		i, ok := have[want.Type]
		if !ok {
			l.add(VRlimitMissing, "$.process.rlimits", "%s is missing (tier: hard %d)", want.Type, want.Hard)
			continue
		}
		if r := p.Rlimits[i]; r.Hard > want.Hard || r.Soft > want.Hard {
			l.add(VRlimitExcess, fmt.Sprintf("$.process.rlimits[%d]", i), "%s %d/%d is above the tier's %d", r.Type, r.Soft, r.Hard, want.Hard)
		}
	}
}

func (l *linter) env(p *specs.Process) {
	f := l.g.Env.Filter
	for i, kv := range p.Env {
		name, _, _ := strings.Cut(kv, "=")
		path := fmt.Sprintf("$.process.env[%d]", i)
		switch f.Check(name) {
		case policy.EnvSecret:
			l.add(VEnvSecret, path, "%s looks like a credential; env_access=%s drops it", name, f.Mode)
		case policy.EnvDenied:
			l.add(VEnvNotAllowed, path, "%s matches a denied pattern (%s)", name, strings.Join(f.Deny, ", "))
		case policy.EnvNotAllowed:
			l.add(VEnvNotAllowed, path, "%s: env_access is deny; only %s may be set", name, strings.Join(f.Keep, ", "))
		}
	}
}

func (l *linter) root() {
	if l.s.Root == nil {
		l.add(VRootfsWritable, "$.root", "no root: cannot check that the rootfs is read-only")
		return
	}
	if l.g.FS.RootfsReadonly && !l.s.Root.Readonly {
		l.add(VRootfsWritable, "$.root.readonly", "must be true: tier %s grants fs_write=%s", l.g.Tier, l.g.Access.FSWrite)
	}
}

func hasNamespace(s *specs.Spec, t specs.LinuxNamespaceType) bool {
	if s.Linux == nil {
		return false
	}
	for _, ns := range s.Linux.Namespaces {
		if ns.Type == t && ns.Path == "" {
			return true
		}
	}
	return false
}

func (l *linter) namespaces() {
	want := []specs.LinuxNamespaceType{specs.PIDNamespace, specs.UTSNamespace, specs.MountNamespace, specs.CgroupNamespace}
	if !l.g.Isolate.HostNetwork {
		want = append(want, specs.NetworkNamespace)
	}
	if !l.g.Isolate.HostIPC {
		want = append(want, specs.IPCNamespace)
	}
	if l.g.Identity.UserNamespace {
		want = append(want, specs.UserNamespace)
	}
	var nss []specs.LinuxNamespace
	if l.s.Linux != nil {
		nss = l.s.Linux.Namespaces
	}
	for i, ns := range nss {
		hostAllowed := (ns.Type == specs.NetworkNamespace && l.g.Isolate.HostNetwork) || (ns.Type == specs.IPCNamespace && l.g.Isolate.HostIPC)
		if ns.Path != "" && !hostAllowed {
			l.add(VNamespaceShared, fmt.Sprintf("$.linux.namespaces[%d].path", i), "joins the existing %s namespace %s; tier %s requires a new one", ns.Type, ns.Path, l.g.Tier)
		}
	}
	for _, t := range want {
		if !hasNamespace(l.s, t) {
			l.add(VNamespaceMissing, "$.linux.namespaces", "no new %s namespace: tier %s requires one (without it the sandbox shares the host's)", t, l.g.Tier)
		}
	}
	if l.s.Linux != nil && hasNamespace(l.s, specs.UserNamespace) {
		for i, m := range l.s.Linux.UIDMappings {
			if m.HostID == 0 && !l.g.Rootless {
				l.add(VUserNSRoot, fmt.Sprintf("$.linux.uidMappings[%d]", i), "maps container uid %d to host root", m.ContainerID)
			}
		}
		for i, m := range l.s.Linux.GIDMappings {
			if m.HostID == 0 && !l.g.Rootless {
				l.add(VUserNSRoot, fmt.Sprintf("$.linux.gidMappings[%d]", i), "maps container gid %d to host root's group", m.ContainerID)
			}
		}
	}
}

// grantRule is one allow rule of the grants, for comparing spec rules.
type grantRule struct{ args []policy.SyscallArg }

func (l *linter) seccomp() {
	if l.s.Linux == nil || l.s.Linux.Seccomp == nil {
		l.add(VSeccompMissing, "$.linux.seccomp", "no syscall filter: tier %s requires one", l.g.Tier)
		return
	}
	sc := l.s.Linux.Seccomp
	switch sc.DefaultAction {
	case specs.ActErrno, specs.ActKill, specs.ActKillProcess, specs.ActKillThread, specs.ActTrap:
	default:
		l.add(VSeccompDefault, "$.linux.seccomp.defaultAction", "%s lets every unlisted syscall run; tier %s is an allowlist", sc.DefaultAction, l.g.Tier)
	}
	okArch := map[specs.Arch]bool{}
	for _, a := range l.ref.Linux.Seccomp.Architectures {
		okArch[a] = true
	}
	for i, a := range sc.Architectures {
		if !okArch[a] {
			l.add(VSeccompArch, fmt.Sprintf("$.linux.seccomp.architectures[%d]", i), "%s is not allowed by tier %s", a, l.g.Tier)
		}
	}
	for i, f := range sc.Flags {
		if f == specs.LinuxSeccompFlagSpecAllow {
			l.add(VSeccompFlag, fmt.Sprintf("$.linux.seccomp.flags[%d]", i), "%s disables speculative-store-bypass mitigation", f)
		}
	}
	allowed := map[string][]grantRule{}
	for _, grp := range l.g.Syscalls.Groups {
		if grp.Action != "allow" {
			continue
		}
		for _, r := range grp.Rules {
			for _, n := range r.Names {
				allowed[n] = append(allowed[n], grantRule{args: r.Args})
			}
		}
	}
	for i, rule := range sc.Syscalls {
		switch rule.Action {
		case specs.ActErrno, specs.ActKill, specs.ActKillProcess, specs.ActKillThread, specs.ActTrap:
			continue
		}
		for j, name := range rule.Names {
			if !ruleCovered(allowed[name], rule.Args) {
				l.add(VSeccompWider, fmt.Sprintf("$.linux.seccomp.syscalls[%d].names[%d]", i, j), "%s is %s here but not allowed (with these arguments) by tier %s", name, rule.Action, l.g.Tier)
			}
		}
	}
}

// ruleCovered: a spec allow rule is within the grants if the grants allow
// the name unconditionally, or with exactly the same argument conditions.
func ruleCovered(grants []grantRule, args []specs.LinuxSeccompArg) bool {
	for _, g := range grants {
		if len(g.args) == 0 {
			return true
		}
		if len(g.args) != len(args) {
			continue
		}
		same := true
		for k, a := range g.args {
			b := args[k]
			if a.Index != b.Index || a.Value != b.Value || a.ValueTwo != b.ValueTwo || a.Op != string(b.Op) {
				same = false
			}
		}
		if same {
			return true
		}
	}
	return false
}
