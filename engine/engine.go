// Package engine is sbxrun as a library: every decision the CLI verbs and
// the feature packages (agent, capture, …) need, made in one place.
//
// It selects the tier of a request in one precedence order (an explicit
// tier from a flag or an annotation, else the config's, else the
// connector's binding, else the system default in runtime.yaml, else —
// where a tier is required — the catalog's most restrictive), checks the
// connector's binding and any override token, compiles the Grants, enforces
// them on an incoming OCI spec, drives the container runtime, and writes one
// audit record per decision (allowed or refused). Protections that cannot be
// applied are refused or reported as not enforced, in the result and in the
// audit log, never silently dropped.
//
// The verbs in cmd/sbxrun parse flags, call one Engine method and print.
// Only package container touches libcontainer; the engine drives it.
package engine

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

// Options say where an installation keeps its state.
type Options struct {
	// Root holds the runtime state of containers (runc's --root).
	Root string
	// StateDir holds connector bindings and, by default, the audit log.
	StateDir string
	// ConfigDir holds runtime.yaml and the override token store.
	ConfigDir string
	// AuditLog is the audit log file (default <StateDir>/audit.jsonl).
	AuditLog string
	// Catalog is the tier data (default: the built-in catalog).
	Catalog *profiles.Catalog
	// Logger receives warnings and debug diagnostics (default: slog's).
	Logger *slog.Logger
	// EUID is the caller's effective uid (default: os.Geteuid()); a
	// non-zero uid means a rootless sandbox.
	EUID *int
}

// Engine is one sbxrun installation as seen by one caller.
type Engine struct {
	cat        *profiles.Catalog
	log        *slog.Logger
	audit      *audit.Log
	bindings   *authz.Bindings
	overrides  *authz.Overrides
	containers *container.Runtime
	configDir  string
	statePaths []string
	euid       int
	// probe gathers host facts; tests replace it to compile for any host.
	probe func(host.Options) policy.HostFacts
}

// New returns the engine for opts.
func New(opts Options) *Engine {
	e := &Engine{cat: opts.Catalog, log: opts.Logger, configDir: opts.ConfigDir, euid: os.Geteuid(), probe: host.Probe}
	if e.cat == nil {
		e.cat = profiles.Builtin()
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if opts.EUID != nil {
		e.euid = *opts.EUID
	}
	path := opts.AuditLog
	if path == "" {
		path = audit.DefaultPath(opts.StateDir)
	}
	e.audit = audit.Open(path)
	for _, p := range []string{opts.Root, opts.StateDir, opts.ConfigDir, filepath.Dir(path)} {
		if abs, err := filepath.Abs(p); err == nil && p != "" {
			e.statePaths = append(e.statePaths, abs)
		}
	}
	e.bindings = authz.OpenBindings(opts.StateDir, e.euid, e.cat)
	e.overrides = authz.OpenOverrides(opts.ConfigDir, e.euid)
	e.containers = &container.Runtime{Root: opts.Root}
	return e
}

// Catalog is the tier data the engine decides with.
func (e *Engine) Catalog() *profiles.Catalog { return e.cat }

// Containers is the container runtime (state, kill, pause, … of existing
// containers: verbs that decide nothing).
func (e *Engine) Containers() *container.Runtime { return e.containers }

// Rootless reports whether sandboxes of this caller are rootless.
func (e *Engine) Rootless() bool { return e.euid != 0 }

// FactsOptions choose the host a policy is compiled for.
type FactsOptions struct {
	// Rootless compiles for an unprivileged caller; the engine's own
	// caller is rootless when not root, whatever this says.
	Rootless bool
	// Arch is the target architecture (default: this binary's).
	Arch string
	// Reference compiles for the documented reference host instead of this
	// one, so output is byte-identical on every machine (rootless and arch
	// still apply).
	Reference bool
}

// Facts returns the host facts for o.
func (e *Engine) Facts(o FactsOptions) policy.HostFacts {
	f := e.probe(host.Options{Rootless: o.Rootless, Arch: o.Arch, SystemDirs: e.cat.Paths.HostSystemDirs})
	if !o.Reference {
		f.StatePaths = e.statePaths
		return f
	}
	ref := policy.ReferenceFacts(f.Arch, f.Syscalls)
	ref.Rootless, ref.UID, ref.GID = f.Rootless, f.UID, f.GID
	if f.Rootless {
		ref.CgroupLimits = false
	}
	return ref
}

// runtimeFacts are the facts of this caller's own sandboxes.
func (e *Engine) runtimeFacts() policy.HostFacts {
	return e.Facts(FactsOptions{Rootless: e.Rootless()})
}

// HomeDir is the caller's home directory ("/" if it has none).
func HomeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

func xdg(env, fallback string) string {
	if v := os.Getenv(env); v != "" && filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(HomeDir(), fallback)
}

// DefaultOptions are the default locations for the caller: system paths
// as root, XDG paths otherwise. A rootless caller's runtime state goes to
// $XDG_RUNTIME_DIR/sbxrun, else /run/user/UID/sbxrun, else under its state
// home — never a predictable directory in /tmp that another user could
// create first (the container package refuses a root it does not trust).
func DefaultOptions() Options {
	if os.Geteuid() == 0 {
		return Options{Root: "/run/sbxrun", StateDir: "/var/lib/sbxrun", ConfigDir: "/etc/sbxrun"}
	}
	state := filepath.Join(xdg("XDG_STATE_HOME", ".local/state"), "sbxrun")
	root := filepath.Join(state, "run")
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		root = filepath.Join(d, "sbxrun")
	} else if d := "/run/user/" + strconv.Itoa(os.Geteuid()); isDir(d) {
		root = filepath.Join(d, "sbxrun")
	}
	return Options{Root: root, StateDir: state, ConfigDir: filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "sbxrun")}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
