package seatbelt

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

// Preset adds the rules of one use case to a tier's profile. A preset
// never widens what the tier's access levels allow.
type Preset string

// The presets.
const (
	// PresetNone is the tier alone.
	PresetNone Preset = ""
	// PresetAgent confines an AI agent to Options.ProjectRoot (required):
	// the project is readable and writable as the tier's fs levels allow,
	// and the project's git hooks and config, which git later runs
	// unsandboxed, stay read-only.
	PresetAgent Preset = "agent"
	// PresetCapture adds the few services a screen-capture process needs
	// (see capture.go); nothing else.
	PresetCapture Preset = "capture"
)

// Parameter names. Every machine-specific value reaches the profile as a
// parameter, so the text is the same on every machine and no path is ever
// parsed as SBPL.
const (
	ParamTag                = "RUN_TAG"             // the per-run message tag of every deny
	ParamProject            = "PROJECT_ROOT"        // the project, when granted
	ParamRunTmp             = "RUN_TMP"             // the per-run scratch directory (TMPDIR)
	ParamProgram            = "PROGRAM"             // the initial program, canonical
	ParamRootAncestors      = "ROOT_ANCESTORS"      // regex of the directories above granted paths
	ParamProtectedAncestors = "PROTECTED_ANCESTORS" // regex of the directories above protected paths
)

// Fixed executables. Absolute, never looked up in PATH: a PATH entry the
// caller controls must not choose the sandbox tool.
const (
	SandboxExec = "/usr/bin/sandbox-exec"
	envProgram  = "/usr/bin/env"
)

// DefaultTmpDir is the scratch base when Options.TmpDir is empty.
const DefaultTmpDir = "/tmp"

// Options are the machine-specific inputs of Generate. Paths are paths on
// the machine the profile will run on; they are canonicalised here and
// become parameters.
type Options struct {
	// ProjectRoot is the project directory; required by PresetAgent. It is
	// granted like a declared root: readable at fs_read ≥ scoped, writable
	// at fs_write ≥ scoped.
	ProjectRoot string
	// Home is the user's home directory (required): credential stores and
	// agent configuration below it are denied whatever else is granted.
	Home string
	// TmpDir is where the per-run scratch directory is made (default /tmp;
	// on macOS os.TempDir(), which is private to the user, is better).
	TmpDir string
	// Preset selects use-case rules.
	Preset Preset
	// Tag is the per-run message tag attached to every deny; empty means a
	// fresh random one. It names the scratch directory too.
	Tag string
	// SensitiveGlobs are denied under every granted root (nil means
	// DefaultSensitiveGlobs; an empty non-nil slice denies none).
	SensitiveGlobs []string
	// ProxyPort is the local port of the sbxrun allowlist proxy, the only
	// destination at network_access=filtered. 0 means no proxy: no egress.
	ProxyPort int
	// Localhost additionally opens every port of the loopback interface at
	// network_access=filtered (an agent's local dev servers). On macOS that is the
	// host's loopback, shared with every local service, so it is never
	// implied by a tier and is refused at network_access=deny.
	Localhost bool
	// Resolve resolves symlinks (default filepath.EvalSymlinks); tests
	// inject a fake file system.
	Resolve Resolver
	// LookPath finds a program name in a PATH value (default: the first
	// executable regular file in the absolute PATH entries).
	LookPath func(name, pathEnv string) (string, error)
}

// Param is one -D definition.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Profile is a generated SBPL profile with everything needed to run it.
type Profile struct {
	// Text is the SBPL source. It depends only on the Grants and the
	// shape of the options, never on machine paths.
	Text string `json:"text"`
	// Params are the -D definitions, sorted by name.
	Params []Param `json:"params"`
	// Env is the environment the command gets through `env -i`.
	Env []policy.EnvVar `json:"env"`
	// Command is the Grants' process with the canonical program path.
	Command []string `json:"command"`
	// Dir is the working directory: the project when granted, else RUN_TMP.
	Dir string `json:"dir"`
	// Tag is the value of RUN_TAG.
	Tag string `json:"tag"`
	// Terminal: the profile grants the terminal devices (Process.Terminal),
	// and Run leaves the command in the caller's session.
	Terminal bool `json:"terminal"`
	// Unenforced lists what the profile does not carry (also in Text).
	Unenforced []string `json:"unenforced"`
}

// Param returns the value of a parameter, or "".
func (p *Profile) Param(name string) string {
	for _, d := range p.Params {
		if d.Name == name {
			return d.Value
		}
	}
	return ""
}

// ParamMap returns the parameters as Lint takes them.
func (p *Profile) ParamMap() map[string]string {
	m := make(map[string]string, len(p.Params))
	for _, d := range p.Params {
		m[d.Name] = d.Value
	}
	return m
}

// Argv is the command line that runs cmd (p.Command when cmd is empty)
// under the profile: /usr/bin/sandbox-exec -p TEXT -DNAME=VALUE… --
// /usr/bin/env -i K=V… cmd…. SBPL has no environment operation, so the
// environment is filtered here, by env -i. cmd[0] must not contain '='
// (env would take it for a variable); Run refuses such a command.
func (p *Profile) Argv(cmd []string) []string {
	if len(cmd) == 0 {
		cmd = p.Command
	}
	argv := []string{SandboxExec, "-p", p.Text}
	for _, d := range p.Params {
		argv = append(argv, "-D"+d.Name+"="+d.Value)
	}
	argv = append(argv, "--", envProgram, "-i")
	for _, e := range p.Env {
		argv = append(argv, e.Name+"="+e.Value)
	}
	return append(argv, cmd...)
}

// NewTag returns a fresh random run tag.
func NewTag() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating a run tag: %w", err)
	}
	return "sbxrun-" + hex.EncodeToString(b[:]), nil
}

var tagPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// Generate compiles Grants into an SBPL profile. It is deterministic: the
// same Grants and options give the same profile, and the text does not
// depend on the machine. Every profile it returns has passed Lint; invalid
// options and paths are errors with a policy code, never dropped rules.
func Generate(g *policy.Grants, opts Options) (*Profile, error) {
	b, err := newBuilder(g, opts)
	if err != nil {
		return nil, err
	}
	text, err := b.render()
	if err != nil {
		return nil, errcode.Errorf(errcode.CompileError, "seatbelt: %v", err)
	}
	if findings := Lint(text, b.params); len(findings) > 0 {
		details := make([]string, len(findings))
		for i, f := range findings {
			details[i] = f.String()
		}
		return nil, &errcode.Error{Code: errcode.CompileError, Msg: "seatbelt: the generated profile fails lint", Details: details}
	}
	p := &Profile{Text: text, Env: b.env, Command: b.command, Dir: b.dir, Tag: b.opts.Tag, Terminal: g.Process.Terminal, Unenforced: b.unenforced}
	for name, v := range b.params {
		p.Params = append(p.Params, Param{name, v})
	}
	sort.Slice(p.Params, func(i, j int) bool { return p.Params[i].Name < p.Params[j].Name })
	return p, nil
}

// builder holds what the sections are rendered from.
type builder struct {
	g      *policy.Grants
	opts   Options
	canon  canonicaliser
	params map[string]string

	reads      []string        // READ_n: declared read-only paths
	writes     []string        // WRITE_n: declared writable paths
	project    profiles.Access // how PROJECT_ROOT is granted: deny (not at all), scoped (read) or allow (read-write)
	protected  []string        // parameters of protected home paths
	sensitive  []string        // deny regexes of the sensitive globs
	env        []policy.EnvVar
	command    []string
	dir        string
	unenforced []string
}

func invalid(format string, args ...any) error {
	return errcode.Errorf(errcode.ConfigInvalid, "seatbelt: "+format, args...)
}

func newBuilder(g *policy.Grants, opts Options) (*builder, error) {
	if err := checkGrants(g); err != nil {
		return nil, err
	}
	if err := defaults(&opts); err != nil {
		return nil, err
	}
	b := &builder{g: g, opts: opts, params: map[string]string{ParamTag: opts.Tag}, project: profiles.Deny}
	steps := []func() error{b.home, b.runTmp, b.projectRoot, b.fsRoots, b.program, b.protectedPaths,
		b.checkRoots, b.ancestorParams, b.checkNetwork, b.environment, b.sensitiveGlobs}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.unenforced = b.unenforcedNotes()
	return b, nil
}

func defaults(o *Options) error {
	if o.TmpDir == "" {
		o.TmpDir = DefaultTmpDir
	}
	if o.Resolve == nil {
		o.Resolve = filepath.EvalSymlinks
	}
	if o.LookPath == nil {
		o.LookPath = lookPath
	}
	if o.SensitiveGlobs == nil {
		o.SensitiveGlobs = DefaultSensitiveGlobs
	}
	if o.Tag == "" {
		t, err := NewTag()
		if err != nil {
			return err
		}
		o.Tag = t
	}
	switch {
	case !tagPattern().MatchString(o.Tag):
		return invalid("tag %q: want 1-64 letters, digits, '.', '_' or '-'", o.Tag)
	case o.Preset != PresetNone && o.Preset != PresetAgent && o.Preset != PresetCapture:
		return invalid("unknown preset %q (agent, capture or none)", o.Preset)
	case o.ProxyPort < 0 || o.ProxyPort > 65535:
		return invalid("proxy port %d out of range", o.ProxyPort)
	}
	return nil
}

// netModes is the network mode policy.Compile derives from each level.
var netModes = map[profiles.Access]string{profiles.Deny: "none", profiles.Filtered: "proxy", profiles.Allow: "host"}

// checkGrants refuses Grants this generator cannot read faithfully: a
// schema it does not know or levels that contradict each other would
// otherwise turn into a profile that means something else.
func checkGrants(g *policy.Grants) error {
	if g == nil {
		return invalid("no grants")
	}
	if g.Version != policy.GrantsVersion {
		return invalid("grants version %d, this generator reads %d", g.Version, policy.GrantsVersion)
	}
	for _, c := range profiles.Capabilities {
		if _, ok := profiles.Rank(c, g.Access.Get(c)); !ok {
			return invalid("%s=%q is not a level of %s", c, g.Access.Get(c), c)
		}
	}
	a := g.Access
	switch {
	case a.FSWrite != profiles.Deny && a.FSRead == profiles.Deny:
		return invalid("fs_write=%s with fs_read=deny", a.FSWrite)
	case a.FSRead == profiles.Deny && len(g.FS.Paths) > 0:
		return invalid("fs_read=deny but %d path(s) granted", len(g.FS.Paths))
	case g.Net.Mode != netModes[a.NetworkAccess]:
		return invalid("network mode %q contradicts network_access=%s", g.Net.Mode, a.NetworkAccess)
	case len(g.Process.Args) == 0 || g.Process.Args[0] == "":
		return invalid("no program to run")
	}
	for _, e := range g.Net.Allow {
		if _, err := policy.CheckHostPort(e); err != nil {
			return invalid("network allowlist: %v", err)
		}
	}
	for _, p := range g.FS.Paths {
		if p.Writable && a.FSWrite == profiles.Deny {
			return invalid("fs_write=deny but %s is granted writable", p.Source)
		}
	}
	return nil
}

func (b *builder) home() error {
	if b.opts.Home == "" {
		return invalid("no home directory: the denies protecting credentials below it need one")
	}
	if strings.HasPrefix(b.opts.Home, "~") {
		return invalid("home %q must not itself use ~", b.opts.Home)
	}
	b.canon = canonicaliser{resolve: b.opts.Resolve}
	h, err := b.canonical("home", b.opts.Home)
	if err != nil {
		return err
	}
	b.canon.home = h
	return nil
}

// canonical canonicalises a path and refuses the root directory, which as
// a granted root would be the whole file system.
func (b *builder) canonical(what, p string) (string, error) {
	c, err := b.canon.path(p)
	if err != nil {
		return "", invalid("%s: %v", what, err)
	}
	if c == "/" {
		return "", invalid("%s %q resolves to /, the whole file system", what, p)
	}
	return c, nil
}

func (b *builder) runTmp() error {
	t, err := b.canonical("tmp dir", b.opts.TmpDir)
	if err != nil {
		return err
	}
	b.params[ParamRunTmp] = path.Join(t, b.opts.Tag)
	b.dir = b.params[ParamRunTmp]
	return nil
}

func (b *builder) projectRoot() error {
	if b.opts.ProjectRoot == "" {
		if b.opts.Preset == PresetAgent {
			return invalid("the agent preset needs a project root")
		}
		return nil
	}
	p, err := b.canonical("project root", b.opts.ProjectRoot)
	if err != nil {
		return err
	}
	if b.g.Access.FSRead == profiles.Deny {
		return nil // fs_read=deny grants no host path, the project included
	}
	b.project = profiles.Scoped
	if b.g.Access.FSWrite != profiles.Deny {
		b.project = profiles.Allow
	}
	b.params[ParamProject] = p
	b.dir = p
	return nil
}

// fsRoots turns the granted host paths into READ_n and WRITE_n, numbered
// in Grants order (sorted by policy) and deduplicated by source, so the
// names depend on the Grants only.
func (b *builder) fsRoots() error {
	writable := map[string]bool{}
	var sources []string
	for _, p := range b.g.FS.Paths {
		if isHostSystemDirGrant(p) {
			continue
		}
		if _, seen := writable[p.Source]; !seen {
			sources = append(sources, p.Source)
		}
		writable[p.Source] = writable[p.Source] || p.Writable
	}
	for _, src := range sources {
		c, err := b.canonical("fs path", src)
		if err != nil {
			return err
		}
		names, prefix := &b.reads, "READ_"
		if writable[src] {
			names, prefix = &b.writes, "WRITE_"
		}
		name := fmt.Sprintf("%s%d", prefix, len(*names))
		*names = append(*names, name)
		b.params[name] = c
	}
	return nil
}

// isHostSystemDirGrant recognises the /run/host mounts policy.Compile adds
// at fs_read=allow for Linux containers. macOS needs no remapping: the
// fs-read section grants its own system directories at that level.
func isHostSystemDirGrant(p policy.PathGrant) bool { return p.System }

func (b *builder) program() error {
	args := b.g.Process.Args
	prog := args[0]
	if !strings.Contains(prog, "/") {
		found, err := b.opts.LookPath(prog, b.envValue("PATH"))
		if err != nil {
			return invalid("initial program: %v", err)
		}
		prog = found
	}
	c, err := b.canonical("initial program", prog)
	if err != nil {
		return err
	}
	b.params[ParamProgram] = c
	// The canonical path is what seatbelt checks on exec (a symlinked
	// path gets EPERM, codex #38286), so it is also what env runs.
	b.command = append([]string{c}, args[1:]...)
	return nil
}

func (b *builder) envValue(name string) string {
	for _, e := range b.g.Env.Vars {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// lookPath finds name in the absolute entries of pathEnv. Relative
// entries are skipped: they would name a different program in every
// working directory.
func lookPath(name, pathEnv string) (string, error) {
	for _, dir := range filepath.SplitList(pathEnv) {
		if !path.IsAbs(dir) {
			continue
		}
		p := path.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH %q", name, pathEnv)
}

// homeProtected are denied reading and writing wherever they resolve to,
// whatever roots are granted. Each is its own parameter: ~/.config may be
// a symlink into a dotfiles repository, and seatbelt matches the resolved
// path.
var homeProtected = []struct{ param, rel string }{
	{"HOME_SSH", ".ssh"},
	{"HOME_AWS", ".aws"},
	{"HOME_GNUPG", ".gnupg"},
	{"HOME_KUBE", ".kube"},
	{"HOME_DOCKER", ".docker"},
	{"HOME_NETRC", ".netrc"},
	{"HOME_GIT_CREDENTIALS", ".git-credentials"},
	{"HOME_GH", ".config/gh"},
	{"HOME_CLAUDE", ".claude"},
	{"HOME_CLAUDE_JSON", ".claude.json"},
	{"HOME_CODEX", ".codex"},
	{"HOME_SBXRUN", ".config/sbxrun"},
}

func (b *builder) protectedPaths() error {
	for _, h := range homeProtected {
		c, err := b.canonical(h.param, path.Join(b.canon.home, h.rel))
		if err != nil {
			return err
		}
		b.params[h.param] = c
		b.protected = append(b.protected, h.param)
	}
	return nil
}

// readRoots are the parameters of the granted host paths.
func (b *builder) readRoots() []string {
	out := append(append([]string{}, b.reads...), b.writes...)
	if b.project != profiles.Deny {
		out = append(out, ParamProject)
	}
	return out
}

// writeRoots are the parameters of the writable host paths.
func (b *builder) writeRoots() []string {
	out := append([]string{}, b.writes...)
	if b.project == profiles.Allow {
		out = append(out, ParamProject)
	}
	return out
}

// roots are the parameters of every granted directory.
func (b *builder) roots() []string {
	return append([]string{ParamRunTmp}, b.readRoots()...)
}

// checkRoots refuses a granted path or the program inside a protected
// path (the protect section would silently take it back, and the run would
// fail only when it starts) and any overlap with the paths no tier may
// expose. The policy checks sources lexically; this repeats the
// check on resolved paths, where a symlink could have led elsewhere.
func (b *builder) checkRoots() error {
	var forbidden []string
	for _, f := range b.g.FS.Forbidden {
		forbidden = append(forbidden, toPrivate(f))
	}
	for _, r := range append(b.roots(), ParamProgram) {
		root := b.params[r]
		for _, p := range b.protected {
			if within(root, b.params[p]) {
				return invalid("%s %s lies inside the protected %s", r, root, b.params[p])
			}
		}
		if r == ParamProgram {
			continue // a program is a file, not a granted directory
		}
		for _, f := range forbidden {
			if within(root, f) || within(f, root) {
				return invalid("%s %s exposes %s, which no tier may expose", r, root, f)
			}
		}
	}
	return nil
}

func (b *builder) ancestorParams() error {
	values := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = b.params[n]
		}
		return out
	}
	granted, err := ancestorRegex(values(append(b.roots(), ParamProgram)))
	if err != nil {
		return invalid("granted paths: %v", err)
	}
	protected, err := ancestorRegex(values(b.protected))
	if err != nil {
		return invalid("protected paths: %v", err)
	}
	b.params[ParamRootAncestors], b.params[ParamProtectedAncestors] = granted, protected
	return nil
}

func (b *builder) checkNetwork() error {
	if b.opts.Localhost && b.g.Access.NetworkAccess == profiles.Deny {
		return invalid("localhost access needs network_access ≥ filtered: on macOS the loopback is the host's, shared with every local service")
	}
	return nil
}

// environment is the Grants' filtered environment plus TMPDIR pointing at
// the only writable scratch directory.
func (b *builder) environment() error {
	vars := map[string]string{}
	for _, e := range b.g.Env.Vars {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") || strings.ContainsRune(e.Value, 0) {
			return invalid("environment variable %q cannot be passed through env", e.Name)
		}
		vars[e.Name] = e.Value
	}
	vars["TMPDIR"] = b.params[ParamRunTmp]
	for n, v := range vars {
		b.env = append(b.env, policy.EnvVar{Name: n, Value: v})
	}
	sort.Slice(b.env, func(i, j int) bool { return b.env[i].Name < b.env[j].Name })
	return nil
}

func (b *builder) sensitiveGlobs() error {
	res, err := sensitiveRegexes(b.opts.SensitiveGlobs)
	if err != nil {
		return invalid("sensitive globs: %v", err)
	}
	b.sensitive = res
	return nil
}

// unenforced lists what this profile cannot carry, for the header and for
// callers to print and audit. policy.Grants.Unenforced describes the Linux
// runtime and does not apply here.
func (b *builder) unenforcedNotes() []string {
	g, a := b.g, b.g.Access
	out := []string{
		"identity: runs as the calling user; uid, gid, capabilities and user namespaces have no seatbelt equivalent",
		"isolation: macOS has no namespaces; hostname and masked or read-only kernel paths do not apply",
		"syscalls: the seccomp filter has no seatbelt equivalent; the operation rules are the whole confinement",
		fmt.Sprintf("limits: memory %d bytes, cpu %d/%d us, %d pids and %d rlimit(s) are not set by the profile",
			g.Limits.MemoryBytes, g.Limits.CPUQuota, g.Limits.CPUPeriod, g.Limits.Pids, len(g.Limits.Rlimits)),
		"env_access=" + string(a.EnvAccess) + ": the environment is filtered by /usr/bin/env -i in the argv, not by the profile",
	}
	if a.FSRead == profiles.Deny {
		out = append(out, "fs_read=deny: macOS has no image rootfs; system libraries and /bin, /sbin, /usr/bin, /usr/sbin, /usr/libexec stay readable so that programs start")
	}
	if a.FSWrite == profiles.Allow {
		out = append(out, "fs_write=allow: macOS has no per-run rootfs to make writable; writes go where scoped allows them")
	}
	switch a.IPC {
	case profiles.Scoped:
		out = append(out, "ipc=scoped: macOS has no IPC namespace; POSIX semaphore names are shared with the user's other processes")
	case profiles.Allow:
		out = append(out, "ipc=allow: POSIX semaphores and shared memory only; Mach services stay limited")
	}
	if a.NetworkAccess == profiles.Filtered {
		switch {
		case b.opts.Localhost:
			out = append(out, "network_access=filtered: Options.Localhost opens every loopback port, the host's own services included")
		case b.opts.ProxyPort == 0:
			out = append(out, "network_access=filtered: no proxy port given, so no egress at all")
		default:
			out = append(out, "network_access=filtered: only the proxy port is reachable; the allowlist itself is enforced by the sbxrun proxy")
		}
	}
	for i, p := range g.FS.Paths {
		if p.Destination != p.Source && !isHostSystemDirGrant(p) {
			out = append(out, fmt.Sprintf("fs path %d: macOS cannot remap paths; it is visible at its source, not its destination", i))
		}
	}
	sort.Strings(out)
	return out
}
