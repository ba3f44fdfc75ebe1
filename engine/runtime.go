package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/enforce"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/specgen"
)

// grantsAttachment is where a container keeps the Grants it was created
// under: exec and update enforce those, not a recompilation.
const grantsAttachment = "grants.json"

// CreateRequest is a container to create from an OCI bundle.
type CreateRequest struct {
	ID string
	// Bundle is the bundle directory (default: the current directory).
	Bundle string
	// PidFile receives the init's pid.
	PidFile string
	// ConsoleSocket receives the pty master of a terminal container.
	ConsoleSocket string
	NoPivot       bool
	NoNewKeyring  bool
	// PreserveFDs passes the caller's fds 3..3+N-1 to the container.
	PreserveFDs int
}

// Create creates a container whose process waits for Start, with the tier
// its annotations, connector binding or the system default select
// enforced on its spec.
func (e *Engine) Create(req CreateRequest) error {
	o, err := e.prepare(req, "create", true)
	if err != nil {
		return err
	}
	return e.containers.Create(o)
}

// Run creates and starts a container. Detached it returns once the process
// runs; otherwise it relays stdio and signals, waits, removes the container
// and returns the process's exit status (128+N when killed by signal N).
func (e *Engine) Run(req CreateRequest, detach bool, stdio container.IO) (int, error) {
	o, err := e.prepare(req, "run", detach)
	if err != nil {
		return -1, err
	}
	return e.containers.Run(o, detach, stdio)
}

// prepare reads and checks the bundle, decides its tier and enforces it,
// and returns what the container runtime needs.
func (e *Engine) prepare(req CreateRequest, op string, detached bool) (container.CreateOptions, error) {
	var o container.CreateOptions
	if err := container.ValidateID(req.ID); err != nil {
		return o, err
	}
	bundle, err := bundleDir(req.Bundle)
	if err != nil {
		return o, err
	}
	pidFile, err := absOrEmpty(req.PidFile)
	if err != nil {
		return o, err
	}
	spec, err := readBundleSpec(bundle)
	if err != nil {
		return o, err
	}
	facts := e.runtimeFacts()
	if err := checkSpec(spec, bundle, facts); err != nil {
		return o, err
	}
	if err := checkRuntimeFlags(req.ConsoleSocket, pidFile, req.PreserveFDs, spec.Process.Terminal, detached); err != nil {
		return o, err
	}
	sel, err := ParseAnnotations(spec.Annotations, e.cat)
	if err != nil {
		return o, e.refuse(audit.Record{Operation: op, Target: req.ID}, err)
	}
	d, err := e.Select(Request{Operation: op, Target: req.ID, Tier: sel.Tier, From: FromAnnotation,
		Connector: sel.Connector, Facts: facts, Spec: spec, Bundle: bundle})
	if err != nil {
		return o, err
	}
	o = container.CreateOptions{ID: req.ID, Bundle: bundle, Spec: d.Spec, PidFile: pidFile,
		ConsoleSocket: req.ConsoleSocket, NoPivot: req.NoPivot, NoNewKeyring: req.NoNewKeyring,
		PreserveFDs: req.PreserveFDs}
	if d.Grants != nil {
		o.InitialOnly, o.OwnCgroup = d.Grants.Exec.InitialOnly, true
		data, err := json.Marshal(d.Grants)
		if err != nil {
			return o, fmt.Errorf("encoding grants: %w", err)
		}
		o.Attachments = map[string][]byte{grantsAttachment: data}
	}
	return o, nil
}

// checkRuntimeFlags refuses, before anything is decided or created, the
// runtime flags that contradict the spec or name nothing usable.
func checkRuntimeFlags(consoleSocket, pidFile string, preserveFDs int, terminal, detached bool) error {
	switch {
	case consoleSocket != "" && !terminal:
		return errcode.Errorf(errcode.ConfigInvalid, "--console-socket is only for a process with a terminal (process.terminal is false)")
	case consoleSocket == "" && terminal && detached:
		return errcode.Errorf(errcode.ConfigInvalid, "a detached process with a terminal needs --console-socket to receive it")
	case consoleSocket != "":
		if fi, err := os.Stat(consoleSocket); err != nil || fi.Mode().Type() != os.ModeSocket {
			return errcode.Errorf(errcode.ConfigInvalid, "--console-socket %s is not a unix socket", consoleSocket)
		}
	}
	if pidFile != "" {
		if fi, err := os.Stat(filepath.Dir(pidFile)); err != nil || !fi.IsDir() {
			return errcode.Errorf(errcode.ConfigInvalid, "--pid-file %s: directory %s does not exist", pidFile, filepath.Dir(pidFile))
		}
	}
	if preserveFDs < 0 {
		return errcode.Errorf(errcode.ConfigInvalid, "--preserve-fds must not be negative")
	}
	for fd := 3; fd < 3+preserveFDs; fd++ {
		if !fdOpen(fd) {
			return errcode.Errorf(errcode.ConfigInvalid, "--preserve-fds %d: fd %d is not open", preserveFDs, fd)
		}
	}
	return nil
}

func absOrEmpty(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return filepath.Abs(p)
}

// bundleDir resolves the bundle directory to its real path.
func bundleDir(b string) (string, error) {
	if b == "" {
		b = "."
	}
	abs, err := filepath.Abs(b)
	if err != nil {
		return "", errcode.Errorf(errcode.SpecInvalid, "bundle %s: %v", b, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", errcode.Errorf(errcode.SpecInvalid, "bundle %s: %v", b, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", errcode.Errorf(errcode.SpecInvalid, "bundle %s is not a directory", b)
	}
	return real, nil
}

// readBundleSpec reads BUNDLE/config.json. Unknown fields are ignored, as
// the OCI runtime specification requires of runtimes (lint reports them).
func readBundleSpec(bundle string) (*specs.Spec, error) {
	path := filepath.Join(bundle, "config.json")
	data, err := readRegular(path, maxSpecBytes, errcode.SpecInvalid)
	if err != nil {
		return nil, err
	}
	var s specs.Spec
	if err := decodeJSON(data, &s, true); err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "parsing %s: %v", path, err)
	}
	return &s, nil
}

// checkSpec refuses, with SANDBOX_SPEC_INVALID, a spec no runtime could
// run, before anything is created: what libcontainer or the kernel would
// otherwise reject half-way (as an internal error) is the input's fault.
func checkSpec(s *specs.Spec, bundle string, facts policy.HostFacts) error {
	if s.Process == nil || s.Root == nil {
		return errcode.Errorf(errcode.SpecInvalid, "the spec needs process and root")
	}
	if err := checkProcess(s.Process, "process", facts); err != nil {
		return err
	}
	root := s.Root.Path
	if root == "" {
		return errcode.Errorf(errcode.SpecInvalid, "root.path is empty")
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(bundle, root)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return errcode.Errorf(errcode.SpecInvalid, "root.path %s: %v", s.Root.Path, err)
	}
	if real != filepath.Clean(root) {
		return errcode.Errorf(errcode.SpecInvalid, "root.path %s is, or passes through, a symlink (to %s); give the real path", s.Root.Path, real)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return errcode.Errorf(errcode.SpecInvalid, "root.path %s is not a directory", s.Root.Path)
	}
	if s.Linux != nil && s.Linux.Resources != nil && s.Linux.Resources.Memory != nil {
		if l := s.Linux.Resources.Memory.Limit; l != nil && *l > 0 && *l < policy.MinMemoryBytes {
			return errcode.Errorf(errcode.SpecInvalid, "linux.resources.memory.limit %d is below the minimum of %d bytes a container needs to start", *l, policy.MinMemoryBytes)
		}
	}
	return nil
}

// checkProcess refuses a process no runtime could start: no program, a
// relative cwd or one through /proc (a path like /proc/self/fd/N would
// resolve through a descriptor of the runtime), rlimits above what the
// kernel lets this host raise.
func checkProcess(p *specs.Process, field string, facts policy.HostFacts) error {
	if len(p.Args) == 0 || p.Args[0] == "" {
		return errcode.Errorf(errcode.SpecInvalid, "%s.args is empty: nothing to run", field)
	}
	if !filepath.IsAbs(p.Cwd) {
		return errcode.Errorf(errcode.SpecInvalid, "%s.cwd %q must be absolute", field, p.Cwd)
	}
	if c := filepath.Clean(p.Cwd); c == "/proc" || strings.HasPrefix(c, "/proc/") {
		return errcode.Errorf(errcode.SpecInvalid, "%s.cwd %s is under /proc; a working directory there can resolve outside the container", field, p.Cwd)
	}
	for i, r := range p.Rlimits {
		if hard, ok := facts.HardRlimits[r.Type]; ok && r.Hard > hard {
			return errcode.Errorf(errcode.SpecInvalid, "%s.rlimits[%d]: %s hard %d is above this host's hard limit %d, which the kernel will not raise", field, i, r.Type, r.Hard, hard)
		}
		if r.Soft > r.Hard {
			return errcode.Errorf(errcode.SpecInvalid, "%s.rlimits[%d]: %s soft %d is above hard %d", field, i, r.Type, r.Soft, r.Hard)
		}
	}
	return nil
}

// containerGrants returns the Grants a container was created under, nil
// for a container without a tier. The recorded grants must match the
// grants hash in the container's annotations.
func (e *Engine) containerGrants(id string, st *container.State) (*policy.Grants, error) {
	tier := st.Annotations[specgen.AnnotationTier]
	if tier == "" {
		return nil, nil
	}
	data, err := e.containers.Attachment(id, grantsAttachment)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, errcode.Errorf(errcode.StateUntrusted, "container %s runs under tier %s but its grants are not recorded; recreate it", id, tier)
	}
	var g policy.Grants
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, errcode.Errorf(errcode.StateUntrusted, "recorded grants of %s: %v", id, err)
	}
	sum, err := specgen.GrantsHash(&g)
	if err != nil {
		return nil, err
	}
	if want := st.Annotations[specgen.AnnotationGrantsHash]; g.Tier != tier || want != sum {
		return nil, errcode.Errorf(errcode.StateUntrusted, "recorded grants of %s do not match its annotations (tier %s, hash %s)", id, tier, want)
	}
	return &g, nil
}

// ExecRequest is a process to start in a running container: from an OCI
// process file, or the bundle's process with these overrides (runc's
// semantics).
type ExecRequest struct {
	ID          string
	ProcessFile string
	Args        []string
	Terminal    bool
	Cwd         string
	Env         []string
	// User is "UID[:GID]".
	User           string
	AdditionalGids []uint32
	// Caps are added to the bounding, effective and permitted sets (the
	// tier may take them away again).
	Caps          []string
	NoNewPrivs    bool
	AppArmor      string
	ProcessLabel  string
	Detach        bool
	PidFile       string
	ConsoleSocket string
	PreserveFDs   int
}

// Exec runs a process in a running container under the container's tier:
// capabilities intersected, environment filtered, user and rlimits
// bounded, process_exec=deny kept. The decision is audited.
func (e *Engine) Exec(req ExecRequest, stdio container.IO) (int, error) {
	if err := container.ValidateID(req.ID); err != nil {
		return -1, err
	}
	pidFile, err := absOrEmpty(req.PidFile)
	if err != nil {
		return -1, err
	}
	st, err := e.containers.State(req.ID)
	if err != nil {
		return -1, err
	}
	rec := audit.Record{Operation: "exec", Target: req.ID, Tier: st.Annotations[specgen.AnnotationTier], Connector: st.Annotations[specgen.AnnotationConnector]}
	if rec.Tier != "" {
		rec.Policy = "tier:" + rec.Tier
	}
	// Once the container is known, every refusal is a decision about it
	// and is audited; an untiered container's execs run as given.
	refuse := func(err error) (int, error) {
		if rec.Tier == "" {
			return -1, err
		}
		return -1, e.refuse(rec, err)
	}
	p, err := execProcess(req, st)
	if err != nil {
		return refuse(err)
	}
	if err := checkProcess(p, "process", e.runtimeFacts()); err != nil {
		return refuse(err)
	}
	if err := checkRuntimeFlags(req.ConsoleSocket, pidFile, req.PreserveFDs, p.Terminal, req.Detach); err != nil {
		return refuse(err)
	}
	g, err := e.containerGrants(req.ID, st)
	if err != nil {
		return refuse(err)
	}
	initialOnly := false
	if g != nil {
		var changes []string
		if p, changes, err = enforce.EnforceProcess(p, g); err != nil {
			return refuse(err)
		}
		rec.Kind, rec.Result, rec.Details = audit.KindSelection, audit.ResultAllowed, changes
		if _, err := e.audit.Append(rec); err != nil {
			return -1, err
		}
		initialOnly = g.Exec.InitialOnly
	}
	return e.containers.Exec(req.ID, container.ExecOptions{Process: p, Detach: req.Detach, PidFile: pidFile,
		ConsoleSocket: req.ConsoleSocket, PreserveFDs: req.PreserveFDs, InitialOnly: initialOnly}, stdio)
}

// execProcess builds the process of an exec: the --process file, or the
// bundle's process with the request's args and overrides.
func execProcess(req ExecRequest, st *container.State) (*specs.Process, error) {
	if req.ProcessFile != "" {
		if len(req.Args) > 0 {
			return nil, errcode.Errorf(errcode.ConfigInvalid, "exec takes --process or a command, not both")
		}
		return ReadProcess(req.ProcessFile)
	}
	if len(req.Args) == 0 {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "exec needs a command or --process")
	}
	spec, err := readBundleSpec(st.Bundle)
	if err != nil {
		return nil, err
	}
	if spec.Process == nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "the bundle's spec has no process")
	}
	p := spec.Process
	p.Args = req.Args
	p.Terminal = req.Terminal
	if req.Cwd != "" {
		p.Cwd = req.Cwd
	}
	p.Env = append(p.Env, req.Env...)
	if req.User != "" {
		u, err := parseUser(req.User)
		if err != nil {
			return nil, err
		}
		p.User = u
	}
	p.User.AdditionalGids = append(p.User.AdditionalGids, req.AdditionalGids...)
	if len(req.Caps) > 0 {
		if p.Capabilities == nil {
			p.Capabilities = &specs.LinuxCapabilities{}
		}
		c := p.Capabilities
		c.Bounding, c.Effective, c.Permitted = append(c.Bounding, req.Caps...), append(c.Effective, req.Caps...), append(c.Permitted, req.Caps...)
	}
	if req.NoNewPrivs {
		p.NoNewPrivileges = true
	}
	if req.AppArmor != "" {
		p.ApparmorProfile = req.AppArmor
	}
	if req.ProcessLabel != "" {
		p.SelinuxLabel = req.ProcessLabel
	}
	return p, nil
}

func parseUser(s string) (specs.User, error) {
	var u specs.User
	uid, gid, hasGID := strings.Cut(s, ":")
	n, err := strconv.ParseUint(uid, 10, 32)
	if err != nil {
		return u, errcode.Errorf(errcode.ConfigInvalid, "--user %q: want UID[:GID]", s)
	}
	u.UID = uint32(n)
	if hasGID {
		if n, err = strconv.ParseUint(gid, 10, 32); err != nil {
			return u, errcode.Errorf(errcode.ConfigInvalid, "--user %q: want UID[:GID]", s)
		}
		u.GID = uint32(n)
	}
	return u, nil
}

// Update changes a running container's resource limits. Under a tier each
// field is checked against the container's grants (a ceiling may only be
// lowered); the container runtime then applies every field or refuses it.
// The decision is audited.
func (e *Engine) Update(id string, res *specs.LinuxResources) error {
	if err := container.ValidateID(id); err != nil {
		return err
	}
	st, err := e.containers.State(id)
	if err != nil {
		return err
	}
	tier := st.Annotations[specgen.AnnotationTier]
	if tier == "" {
		return e.containers.Update(id, res)
	}
	rec := audit.Record{Operation: "update", Target: id, Tier: tier, Policy: "tier:" + tier, Connector: st.Annotations[specgen.AnnotationConnector]}
	g, err := e.containerGrants(id, st)
	if err != nil {
		return e.refuse(rec, err)
	}
	cur, err := e.containers.Limits(id)
	if err != nil {
		return e.refuse(rec, err)
	}
	changes, err := enforce.CheckUpdate(res, cur, g)
	if err != nil {
		return e.refuse(rec, err)
	}
	if err := e.containers.Update(id, res); err != nil {
		return e.refuse(rec, err)
	}
	data, _ := json.Marshal(res)
	rec.Kind, rec.Result, rec.Details = audit.KindChange, audit.ResultAllowed, append(changes, "resources: "+string(data))
	_, err = e.audit.Append(rec)
	return err
}
