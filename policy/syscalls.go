package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/profiles"
)

// errnoENOSYS is returned for every syscall no rule matches: programs treat
// ENOSYS as "old kernel" and fall back, where EPERM would make them fail.
const errnoENOSYS = 38

// tierGroups returns the tier's syscall groups adjusted to the effective ipc
// level (a config may narrow ipc, or an override widen it).
func (c *compiler) tierGroups() []string {
	var out []string
	ipcAllowed := c.g.Access.IPC != profiles.Deny
	for _, n := range c.tier.SyscallGroups {
		if (n == "ipc-sysv" && !ipcAllowed) || (n == "deny-ipc" && ipcAllowed) {
			continue
		}
		out = append(out, n)
	}
	has := map[string]bool{}
	for _, n := range out {
		has[n] = true
	}
	if ipcAllowed && !has["ipc-sysv"] {
		out = append(out, "ipc-sysv")
	}
	if !ipcAllowed && !has["deny-ipc"] {
		out = append(out, "deny-ipc")
	}
	return out
}

func (c *compiler) known(name string) (bool, error) {
	return c.facts.Syscalls.Known(name, c.facts.Arch)
}

func (c *compiler) syscalls() error {
	sg := &c.g.Syscalls
	sg.DefaultErrno = errnoENOSYS
	sg.CompatArches = c.tier.CompatArches
	for _, name := range c.tierGroups() {
		grp, ok := c.cat.Group(name)
		if !ok {
			return errcode.Errorf(errcode.CompileError, "tier %s names unknown syscall group %q", c.tier.Name, name)
		}
		out := SyscallGroup{Name: grp.Name, Action: grp.Action, Errno: profiles.Errnos[grp.Action], Why: grp.Why}
		for _, r := range grp.Rules {
			if len(r.Arches) > 0 && !containsStr(r.Arches, c.facts.Arch) {
				continue
			}
			names := append([]string{}, r.Names...)
			for _, n := range names {
				ok, err := c.known(n)
				if err != nil {
					return errcode.Errorf(errcode.CompileError, "validating syscall %q for %s: %v", n, c.facts.Arch, err)
				}
				if !ok {
					// Tier data is ours: an unknown name is a bug in it, and a
					// silently skipped name could be a hole in a deny list.
					return errcode.Errorf(errcode.CompileError, "syscall group %s: %q is not a syscall on %s", grp.Name, n, c.facts.Arch)
				}
			}
			sort.Strings(names)
			out.Rules = append(out.Rules, SyscallRule{Names: names, Args: append([]SyscallArg(nil), r.Args...)})
		}
		if len(out.Rules) > 0 {
			sg.Groups = append(sg.Groups, out)
		}
	}

	deny := c.checkedNames("syscalls.deny", c.cfg.Syscalls.Deny)
	allow := c.checkedNames("syscalls.allow", c.cfg.Syscalls.Allow)
	for _, n := range allow {
		if containsStr(deny, n) {
			c.conflict("syscalls: %s is both allowed and denied", n)
		}
	}
	if len(deny) > 0 {
		c.removeNames(deny, func(g *SyscallGroup) bool { return g.Action == "allow" })
		sg.Groups = append(sg.Groups, SyscallGroup{Name: "config-deny", Action: "EPERM", Errno: profiles.Errnos["EPERM"],
			Why: "denied by the config", Rules: []SyscallRule{{Names: deny}}})
	}
	var widened []string
	for _, n := range allow {
		if !c.allowedUnconditionally(n) {
			widened = append(widened, n)
		}
	}
	if len(widened) > 0 {
		c.widen("syscalls.allow: %s not allowed by the tier", strings.Join(widened, ", "))
		c.removeNames(widened, func(g *SyscallGroup) bool { return true })
		sg.Groups = append(sg.Groups, SyscallGroup{Name: "config-allow", Action: "allow",
			Why: "allowed by the config under an override authorization", Rules: []SyscallRule{{Names: widened}}})
	}
	c.checkContradictions()
	return nil
}

// checkedNames validates, dedupes and sorts config syscall names.
func (c *compiler) checkedNames(field string, names []string) []string {
	seen := map[string]bool{}
	var out []string
	for i, n := range names {
		ok, err := c.known(n)
		if err != nil || !ok {
			c.conflict("%s[%d]: %q is not a syscall on %s", field, i, n, c.facts.Arch)
			continue
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func (c *compiler) allowedUnconditionally(name string) bool {
	for _, g := range c.g.Syscalls.Groups {
		if g.Action != "allow" {
			continue
		}
		for _, r := range g.Rules {
			if len(r.Args) == 0 && containsStr(r.Names, name) {
				return true
			}
		}
	}
	return false
}

// removeNames drops names from every rule of the groups sel picks, and drops
// rules and groups left empty.
func (c *compiler) removeNames(names []string, sel func(*SyscallGroup) bool) {
	var groups []SyscallGroup
	for _, g := range c.g.Syscalls.Groups {
		if sel(&g) {
			var rules []SyscallRule
			for _, r := range g.Rules {
				var keep []string
				for _, n := range r.Names {
					if !containsStr(names, n) {
						keep = append(keep, n)
					}
				}
				if len(keep) > 0 {
					r.Names = keep
					rules = append(rules, r)
				}
			}
			g.Rules = rules
		}
		if len(g.Rules) > 0 {
			groups = append(groups, g)
		}
	}
	c.g.Syscalls.Groups = groups
}

// checkContradictions refuses a filter where one syscall has an
// unconditional rule with two different actions: which one wins would depend
// on the filter library, so the policy would not mean what it says.
func (c *compiler) checkContradictions() {
	action := map[string]string{}
	for _, g := range c.g.Syscalls.Groups {
		for _, r := range g.Rules {
			if len(r.Args) > 0 {
				continue
			}
			for _, n := range r.Names {
				if prev, ok := action[n]; ok && prev != g.Action {
					c.conflict("syscall %s is both %s and %s (group %s)", n, prev, g.Action, g.Name)
				}
				action[n] = g.Action
			}
		}
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String summarises a group for explain output: its name, action and
// number of distinct syscall names.
func (g SyscallGroup) String() string {
	seen := map[string]bool{}
	for _, r := range g.Rules {
		for _, n := range r.Names {
			seen[n] = true
		}
	}
	return fmt.Sprintf("%s (%s, %d)", g.Name, g.Action, len(seen))
}

// cmpSymbols render the OCI comparison operators; SCMP_CMP_MASKED_EQ is
// rendered as "argN & mask == value".
var cmpSymbols = map[string]string{
	"SCMP_CMP_NE": "!=", "SCMP_CMP_LT": "<", "SCMP_CMP_LE": "<=", "SCMP_CMP_EQ": "==",
	"SCMP_CMP_GE": ">=", "SCMP_CMP_GT": ">",
}

// Conditions describes the argument-conditioned rules of g, one line per
// syscall name in order of first appearance, e.g.
// "personality only when arg0 == 0x0 or arg0 == 0x8". A rule's conditions all must
// hold ("and"); the rules for one name are alternatives ("or"). Rules
// without conditions are not listed.
func (g SyscallGroup) Conditions() []string {
	var order []string
	alts := map[string][]string{}
	for _, r := range g.Rules {
		if len(r.Args) == 0 {
			continue
		}
		conds := make([]string, 0, len(r.Args))
		for _, a := range r.Args {
			if a.Op == "SCMP_CMP_MASKED_EQ" {
				conds = append(conds, fmt.Sprintf("arg%d & %#x == %#x", a.Index, a.Value, a.ValueTwo))
				continue
			}
			sym, ok := cmpSymbols[a.Op]
			if !ok {
				sym = a.Op
			}
			conds = append(conds, fmt.Sprintf("arg%d %s %#x", a.Index, sym, a.Value))
		}
		for _, n := range r.Names {
			if _, ok := alts[n]; !ok {
				order = append(order, n)
			}
			alts[n] = append(alts[n], strings.Join(conds, " and "))
		}
	}
	out := make([]string, 0, len(order))
	for _, n := range order {
		out = append(out, n+" only when "+strings.Join(alts[n], " or "))
	}
	return out
}
