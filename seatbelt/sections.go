package seatbelt

import (
	"fmt"
	"strings"

	"github.com/sbxrun/sbxrun/profiles"
)

// rule is one SBPL rule with the reason it exists.
type rule struct {
	why string
	n   node
}

// section is a titled group of rules. Sections come in a fixed order:
// within one operation the later rule wins, so the protective denies go
// last and only the re-allow of "/" follows them.
type section struct {
	title string
	why   string
	rules []rule
}

func allow(ops []string, filters ...node) node {
	return list(append(syms(append([]string{"allow"}, ops...)...), filters...)...)
}

// deny tags the rule with the run's message, so that every denial in the
// system log can be attributed to one run.
func deny(ops []string, filters ...node) node {
	n := list(append(syms(append([]string{"deny"}, ops...)...), filters...)...)
	n.items = append(n.items, withTag())
	return n
}

func withTag() node { return list(sym("with"), sym("message"), param(ParamTag)) }

func ops(names ...string) []string { return names }

func literals(paths ...string) []node {
	out := make([]node, len(paths))
	for i, p := range paths {
		out[i] = literal(str(p))
	}
	return out
}

func subpaths(paths ...string) []node {
	out := make([]node, len(paths))
	for i, p := range paths {
		out[i] = subpath(str(p))
	}
	return out
}

func paramSubpaths(names []string) []node {
	out := make([]node, len(names))
	for i, n := range names {
		out[i] = subpath(param(n))
	}
	return out
}

func globalNames(names ...string) []node {
	out := make([]node, len(names))
	for i, n := range names {
		out[i] = filter("global-name", str(n))
	}
	return out
}

func below(p, rel string) node { return list(sym("string-append"), param(p), str(rel)) }

// systemLibraries hold the dynamic loader, the shared cache and the
// frameworks every program maps at start.
var systemLibraries = []string{
	"/usr/lib",
	"/System/Library/Frameworks",
	"/System/Library/PrivateFrameworks",
	"/System/Library/SubFrameworks",
	"/System/Library/dyld",
	"/System/Cryptexes",
	"/System/Volumes/Preboot/Cryptexes",
	"/private/var/db/dyld",
}

// systemDirs are readable at fs_read=allow, the macOS counterpart of the
// Linux host system directories: programs and their libraries, never
// /Library as a whole (keychains, application support) or user data.
var systemDirs = []string{
	"/bin",
	"/sbin",
	"/usr",
	"/System",
	"/Library/Apple",
	"/Library/Frameworks",
	"/Library/Developer/CommandLineTools",
	"/opt/homebrew",
}

var sysctlNames = []string{
	"hw.activecpu", "hw.byteorder", "hw.cachelinesize", "hw.cpufamily", "hw.cputype",
	"hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize", "hw.model", "hw.ncpu",
	"hw.nperflevels", "hw.pagesize", "hw.pagesize_compat", "hw.physicalcpu", "hw.physicalcpu_max",
	"hw.tbfrequency_compat", "hw.vectorunit",
	"kern.argmax", "kern.hostname", "kern.maxfilesperproc", "kern.osproductversion", "kern.osrelease",
	"kern.ostype", "kern.osvariant_status", "kern.osversion", "kern.secure_kernel", "kern.usrstack64",
	"kern.version", "machdep.cpu.brand_string", "sysctl.proc_cputype", "vm.loadavg",
}

var sysctlPrefixes = []string{"hw.optional.", "hw.perflevel", "kern.proc.pid.", "machdep.cpu."}

func sysctls() []node {
	var out []node
	for _, n := range sysctlNames {
		out = append(out, filter("sysctl-name", str(n)))
	}
	for _, p := range sysctlPrefixes {
		out = append(out, filter("sysctl-name-prefix", str(p)))
	}
	return out
}

// bootstrap is what any process needs to start under (deny default). It
// is the same for every tier and preset and names no parameter.
func bootstrap() section {
	return section{title: "bootstrap", why: "what any process needs to start; identical for every tier", rules: []rule{
		{"children inherit this profile: a fork gains nothing", allow(ops("process-fork"))},
		{"signals and process inspection stay inside this sandbox", allow(ops("signal"), filter("target", sym("same-sandbox")))},
		{"", allow(ops("process-info*"), filter("target", sym("same-sandbox")))},
		{"dyld aborts unless it can read the root directory itself (the literal, never the subpath)", allow(ops("file-read*"), literal(str("/")))},
		{"stat the symlinks into /private so that paths through them resolve", allow(ops("file-read-metadata"), literals(privateLinks...)...)},
		{"the dynamic loader, its shared cache and the system libraries and frameworks", allow(ops("file-read*", "file-map-executable"), subpaths(systemLibraries...)...)},
		{"the standard tools, including /usr/bin/env (the launcher) and the shell /bin/sh selects",
			allow(ops("file-read*"), append(subpaths("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/libexec"), literal(str("/private/var/select/sh")))...)},
		{"time zone and locale data, and the user and service databases libc reads",
			allow(ops("file-read*"), append(subpaths("/usr/share/zoneinfo", "/usr/share/locale", "/private/var/db/timezone"),
				literals("/private/etc/localtime", "/private/etc/passwd", "/private/etc/group", "/private/etc/protocols", "/private/etc/services")...)...)},
		{"the null device (isatty probes it with an ioctl) and the zero device", allow(ops("file-read*", "file-write-data", "file-ioctl"), literal(str("/dev/null")))},
		{"", allow(ops("file-read*", "file-write-data"), literal(str("/dev/zero")))},
		{"randomness", allow(ops("file-read*"), literals("/dev/random", "/dev/urandom")...)},
		{"descriptors the process already holds, reopened through /dev/fd", allow(ops("file-read-data", "file-write-data"), subpath(str("/dev/fd")))},
		{"output to an inherited terminal; opening, reading and ioctls on terminals need Process.Terminal",
			allow(ops("file-write-data"), filter("require-all", regex(rx(`^/dev/ttys[0-9]+$`)), filter("vnode-type", sym("CHARACTER-DEVICE"))))},
		{"user and group lookups (getpwuid) go through opendirectoryd", allow(ops("mach-lookup"), globalNames("com.apple.system.opendirectoryd.libinfo")...)},
		{"processor information (host_processor_info): runtimes size their thread pools from it (codex #11210)", allow(ops("mach-host*"))},
		{"the sysctls runtimes read at start; kern.proc.pid. is how a process inspects itself", allow(ops("sysctl-read"), sysctls()...)},
	}}
}

func (b *builder) fsRead() section {
	a := b.g.Access.FSRead
	s := section{title: "fs-read", why: "fs_read=" + string(a) + ": " + map[profiles.Access]string{
		profiles.Deny:   "no host path beyond the bootstrap and the scratch directory",
		profiles.Scoped: "the declared roots, read-only",
		profiles.Allow:  "the declared roots and the system directories, read-only",
	}[a]}
	s.rules = append(s.rules, rule{"realpath and getcwd stat every directory above a granted path",
		allow(ops("file-read-metadata"), regex(param(ParamRootAncestors)))})
	if roots := b.readRoots(); len(roots) > 0 {
		s.rules = append(s.rules, rule{"declared roots (written ones again below)", allow(ops("file-read*"), paramSubpaths(roots)...)})
	}
	if a == profiles.Allow {
		s.rules = append(s.rules, rule{"system directories: programs and their libraries, no user data", allow(ops("file-read*"), subpaths(systemDirs...)...)})
	}
	return s
}

func (b *builder) fsWrite() section {
	why := "the per-run scratch directory only"
	if b.g.Access.FSWrite != profiles.Deny {
		why = "the per-run scratch directory and the declared writable roots"
	}
	s := section{title: "fs-write", why: "fs_write=" + string(b.g.Access.FSWrite) + ": " + why}
	s.rules = append(s.rules, rule{"RUN_TMP is this run's own directory (TMPDIR), not all of /tmp: other users' and runs' files stay out of reach",
		allow(ops("file-read*", "file-write*"), subpath(param(ParamRunTmp)))})
	if roots := b.writeRoots(); len(roots) > 0 {
		s.rules = append(s.rules, rule{"declared writable roots", allow(ops("file-read*", "file-write*"), paramSubpaths(roots)...)})
	}
	if b.g.Process.Terminal {
		s.rules = append(s.rules, rule{"Process.Terminal: the controlling terminal and the terminal devices, for line editing and job control",
			allow(ops("file-read-data", "file-write-data", "file-ioctl"), literal(str("/dev/tty")), regex(rx(`^/dev/ttys[0-9]+$`)))})
	}
	return s
}

func (b *builder) processExec() section {
	initialOnly := b.g.Exec.InitialOnly || b.g.Access.ProcessExec == profiles.Deny
	s := section{title: "process-exec", why: "process_exec=" + string(b.g.Access.ProcessExec)}
	if initialOnly {
		s.rules = append(s.rules, rule{"only the launcher and the initial program: a dropped payload or a shell cannot run, and nothing written here can be mapped executable",
			allow(ops("process-exec"), literal(str(envProgram)), literal(param(ParamProgram)))})
	} else {
		s.rules = append(s.rules,
			rule{"any program; children inherit this profile, which is why exec never carries (with no-sandbox)", allow(ops("process-exec"))},
			rule{"programs map their own libraries, wherever they may read them", allow(ops("file-map-executable"))})
	}
	s.rules = append(s.rules, rule{"the initial program itself", allow(ops("file-read*"), literal(param(ParamProgram)))})
	return s
}

func (b *builder) ipc() section {
	a := b.g.Access.IPC
	s := section{title: "ipc", why: "ipc=" + string(a) + ": Mach services stay the bootstrap list at every level"}
	switch a {
	case profiles.Scoped:
		s.rules = append(s.rules, rule{"POSIX semaphores (Python multiprocessing locks); they carry no data", allow(ops("ipc-posix-sem"))})
	case profiles.Allow:
		s.rules = append(s.rules, rule{"POSIX semaphores and shared memory, shared with the user's other processes", allow(ops("ipc-posix-sem", "ipc-posix-shm*"))})
	}
	return s
}

func (b *builder) network() section {
	port := b.opts.ProxyPort
	s := section{title: "network", why: "network_access=" + string(b.g.Access.NetworkAccess)}
	switch b.g.Access.NetworkAccess {
	case profiles.Filtered:
		if b.opts.Localhost {
			s.rules = append(s.rules,
				rule{"Options.Localhost: every loopback port, the proxy included; (remote …), never (local …), on outbound", allow(ops("network-outbound"), filter("remote", sym("ip"), str("localhost:*")))},
				rule{"servers the sandbox runs, on the loopback interface only", allow(ops("network-bind", "network-inbound"), filter("local", sym("ip"), str("localhost:*")))})
		} else if port > 0 {
			s.rules = append(s.rules, rule{"the sbxrun allowlist proxy only; it resolves names and enforces the allowlist",
				allow(ops("network-outbound"), filter("remote", sym("ip"), str(fmt.Sprintf("localhost:%d", port))))})
		}
		if b.opts.Localhost || port > 0 {
			s.rules = append(s.rules, tlsRules()...)
		}
	case profiles.Allow:
		s.rules = append(s.rules,
			rule{"any connection, listener and socket", allow(ops("network-outbound", "network-inbound", "network-bind"))},
			rule{"", allow(ops("system-socket"))},
			rule{"name resolution and network configuration", allow(ops("mach-lookup"), globalNames("com.apple.dnssd.service",
				"com.apple.SystemConfiguration.DNSConfiguration", "com.apple.SystemConfiguration.configd")...)},
			rule{"", allow(ops("file-read*"), literals("/private/etc/hosts", "/private/etc/resolv.conf", "/private/var/run/resolv.conf")...)})
		s.rules = append(s.rules, tlsRules()...)
	}
	return s
}

// tlsRules let a client verify certificates itself, which it does also
// through the proxy (CONNECT keeps TLS end to end).
func tlsRules() []rule {
	return []rule{
		{"certificate evaluation by trustd, and the OpenSSL trust store", allow(ops("mach-lookup"), globalNames("com.apple.trustd.agent")...)},
		{"", allow(ops("file-read*"), subpath(str("/private/etc/ssl")))},
	}
}

// protect holds the denies that must beat every allow above.
func (b *builder) protect() section {
	s := section{title: "protect", why: "denies last: within one operation the later rule wins, so nothing above re-opens these"}
	if roots := b.readRoots(); len(b.sensitive) > 0 && len(roots) > 0 {
		var res []node
		for _, r := range b.sensitive {
			res = append(res, regex(rx(r)))
		}
		s.rules = append(s.rules, rule{"sensitive files at any depth under every granted host path; denying writes too keeps them from being renamed away",
			deny(ops("file-read*", "file-write*"), filter("require-all", filter("require-any", paramSubpaths(roots)...), filter("require-any", res...)))})
	}
	s.rules = append(s.rules,
		rule{"credential stores and agent and sbxrun configuration, wherever they resolve to, whatever root contains them",
			deny(ops("file-read*", "file-write*"), paramSubpaths(b.protected)...)},
		rule{"their ancestors cannot be renamed or replaced: moving one away would carry the files out from under the deny (srt #8)",
			deny(ops("file-write-unlink", "file-write-create"), regex(param(ParamProtectedAncestors)))})
	if b.opts.Preset == PresetAgent && b.project != profiles.Deny {
		s.rules = append(s.rules, rule{"git runs hooks and config-defined programs outside the sandbox later: the project's .git entry, hooks and config stay read-only",
			deny(ops("file-write*"), literal(below(ParamProject, "/.git")), subpath(below(ParamProject, "/.git/hooks")), literal(below(ParamProject, "/.git/config")))})
	}
	return s
}

func rootSection() section {
	return section{title: "root", why: "after every deny: reading / itself keeps dyld alive", rules: []rule{
		{"", allow(ops("file-read*"), literal(str("/")))},
	}}
}

// sections lists the profile's sections in their required order.
func (b *builder) sections() []section {
	s := []section{bootstrap(), b.fsRead(), b.fsWrite(), b.processExec(), b.ipc(), b.network()}
	if b.opts.Preset == PresetCapture {
		s = append(s, capture())
	}
	return append(s, b.protect(), rootSection())
}

// render prints the profile: (version 1), the header, the default rule
// and the sections.
func (b *builder) render() (string, error) {
	var w strings.Builder
	w.WriteString("(version 1)\n")
	for _, line := range b.header() {
		w.WriteString(comment(";", line))
	}
	w.WriteString(`(deny default (with message (param "` + ParamTag + `")))` + "\n")
	for _, s := range b.sections() {
		w.WriteString("\n" + comment(";;", s.title+": "+s.why))
		if len(s.rules) == 0 {
			w.WriteString(comment(";", "nothing granted"))
		}
		for _, r := range s.rules {
			if r.why != "" {
				w.WriteString(comment(";", r.why))
			}
			text, err := render(r.n)
			if err != nil {
				return "", fmt.Errorf("section %s: %v", s.title, err)
			}
			w.WriteString(text + "\n")
		}
	}
	return w.String(), nil
}

func (b *builder) header() []string {
	preset := string(b.opts.Preset)
	if preset == "" {
		preset = "none"
	}
	var access []string
	for _, c := range profiles.Capabilities {
		access = append(access, fmt.Sprintf("%s=%s", c, b.g.Access.Get(c)))
	}
	h := []string{
		"sbxrun seatbelt profile, generated from policy.Grants; do not edit.",
		fmt.Sprintf("tier %s (level %d), preset %s", b.g.Tier, b.g.Level, preset),
		strings.Join(access, " "),
		"Machine-specific values are parameters: sandbox-exec -p PROFILE -DNAME=VALUE... -- /usr/bin/env -i ... CMD",
		"Not enforced by this profile:",
	}
	for _, u := range b.unenforced {
		h = append(h, "  - "+u)
	}
	return h
}

// comment prints one comment line. Control characters would end the
// comment and start SBPL, so they are replaced.
func comment(prefix, text string) string {
	return prefix + " " + strings.Map(func(r rune) rune {
		if isControl(r) {
			return '?'
		}
		return r
	}, text) + "\n"
}
