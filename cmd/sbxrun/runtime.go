package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/enforce"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/specgen"
)

// exitError carries a container's exit status out of `run` and `exec`
// without printing anything.
type exitError struct{ status int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

func runtimeOf(c *cli.Context) *container.Runtime {
	return &container.Runtime{Root: c.String("root")}
}

var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\w+.-]+$`) })

func containerID(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", errcode.Errorf(errcode.ConfigInvalid, "%s takes exactly one container id", c.Command.Name)
	}
	id := c.Args().First()
	if !idRE().MatchString(id) || id == "." || id == ".." {
		return "", errcode.Errorf(errcode.ConfigInvalid, "invalid container id %q", id)
	}
	return id, nil
}

// createFlags are shared by create and run (one code path).
func createFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "bundle directory (default: the current directory)"},
		&cli.StringFlag{Name: "pid-file", Usage: "file to write the container's init pid to"},
		&cli.StringFlag{Name: "console-socket", Usage: "unix socket that receives the pty master of a terminal container"},
		&cli.BoolFlag{Name: "no-pivot", Usage: "do not use pivot_root (needed on a ramdisk rootfs)"},
		&cli.BoolFlag{Name: "no-new-keyring", Usage: "do not create a new session keyring"},
		&cli.IntFlag{Name: "preserve-fds", Usage: "pass this many extra fds (3, 4, …) to the container"},
	}
}

func absPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return filepath.Abs(p)
}

// prepareCreate reads the bundle, enforces the selected tier on its spec,
// and returns the options create and run hand to the container package.
func prepareCreate(c *cli.Context, op string) (container.CreateOptions, error) {
	var o container.CreateOptions
	id, err := containerID(c)
	if err != nil {
		return o, err
	}
	bundle := c.String("bundle")
	if bundle == "" {
		bundle = "."
	}
	if bundle, err = filepath.Abs(bundle); err != nil {
		return o, err
	}
	pidFile, err := absPath(c.String("pid-file"))
	if err != nil {
		return o, err
	}
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return o, errcode.Errorf(errcode.SpecInvalid, "reading bundle spec: %v", err)
	}
	var spec specs.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return o, errcode.Errorf(errcode.SpecInvalid, "parsing %s: %v", filepath.Join(bundle, "config.json"), err)
	}
	if spec.Process == nil || spec.Root == nil {
		return o, errcode.Errorf(errcode.SpecInvalid, "the spec needs process and root")
	}
	enforced, err := enforceSpec(c, id, &spec, op)
	if err != nil {
		return o, err
	}
	return container.CreateOptions{ID: id, Bundle: bundle, Spec: enforced, PidFile: pidFile,
		ConsoleSocket: c.String("console-socket"), NoPivot: c.Bool("no-pivot"), NoNewKeyring: c.Bool("no-new-keyring"),
		PreserveFDs: c.Int("preserve-fds"), InitialOnly: initialOnly(enforced.Annotations)}, nil
}

// enforceSpec applies the tier chosen by annotation, connector binding or
// system default, and writes one audit record with the decision.
func enforceSpec(c *cli.Context, id string, spec *specs.Spec, op string) (*specs.Spec, error) {
	log := auditLog(c)
	rec := audit.Record{Kind: audit.KindSelection, Operation: op, Target: id, Result: audit.ResultAllowed}
	refuse := func(err error) (*specs.Spec, error) {
		rec.Kind, rec.Result, rec.Code = audit.KindRefusal, audit.ResultBlocked, string(errcode.Of(err))
		rec.Reason, rec.Details = oneLineReason(err), details(err)
		if _, aerr := log.Append(rec); aerr != nil {
			return nil, fmt.Errorf("%w (and the refusal could not be audited: %v)", err, aerr)
		}
		return nil, err
	}
	// finish applies libcontainer compatibility adjustments to the final
	// spec and writes the decision's audit record.
	finish := func(out *specs.Spec) (*specs.Spec, error) {
		changes, err := container.Compat(out)
		if err != nil {
			return refuse(errcode.Errorf(errcode.SpecNoncompliant, "%v", err))
		}
		rec.Details = append(rec.Details, changes...)
		if _, err := log.Append(rec); err != nil {
			return nil, err
		}
		return out, nil
	}
	sel, err := enforce.ParseAnnotations(spec.Annotations)
	if err != nil {
		return refuse(err)
	}
	rc, err := enforce.LoadRuntimeConfig(c.String("config-dir"))
	if err != nil {
		return refuse(err)
	}
	tier := sel.Tier
	rec.Connector = sel.Connector
	if sel.Connector != "" {
		if tier == "" {
			b, ok, err := authz.OpenBindings(c.String("state-dir")).Get(sel.Connector)
			if err != nil {
				return refuse(err)
			}
			if ok {
				tier = b.Tier
			}
		}
		if tier == "" {
			tier = rc.DefaultTier
		}
		if tier == "" {
			tier = "strict"
		}
		// Annotations carry no override: a looser tier than the binding is
		// refused here, whoever wrote the spec.
		if err := bindAndAudit(c, sel.Connector, tier, nil); err != nil {
			rec.Tier = tier
			return refuse(err)
		}
	}
	if tier == "" {
		tier = rc.DefaultTier
	}
	rootless := os.Geteuid() != 0
	facts := host.Probe(host.Options{Rootless: rootless})
	if tier == "" {
		rec.Policy, rec.Reason = "no-tier", "no dev.sbx.tier annotation and no default tier: the spec runs as given"
		rec.Details = enforce.NoSharedPropagation(spec)
		if rootless && !facts.CgroupLimits {
			stripped := enforce.StripCgroupLimits(spec)
			warnUnenforced(stripped)
			rec.Details = append(rec.Details, stripped...)
		}
		return finish(spec)
	}
	rec.Tier, rec.Policy = tier, "tier:"+tier
	g, err := policy.Compile(tier, nil, facts, nil)
	if err != nil {
		return refuse(err)
	}
	res, err := enforce.Enforce(spec, g)
	if err != nil {
		return refuse(err)
	}
	rec.Details = append(rec.Details, res.Changes...)
	unenforced := g.Unenforced
	if g.Exec.InitialOnly {
		// This runtime is what enforces process_exec=deny, through the
		// Landlock exec shim; without Landlock it refuses instead.
		if facts.LandlockABI == 0 {
			return refuse(errcode.Errorf(errcode.Unenforceable, "tier %s needs process_exec=deny and this kernel has no Landlock", tier))
		}
		unenforced = nil
		for _, u := range g.Unenforced {
			if !strings.HasPrefix(u, "process_exec=") {
				unenforced = append(unenforced, u)
			}
		}
		rec.Details = append(rec.Details, fmt.Sprintf("process_exec=deny: enforced by the Landlock exec shim (ABI %d)", facts.LandlockABI))
	}
	for _, u := range unenforced {
		rec.Details = append(rec.Details, "unenforced: "+u)
	}
	warnUnenforced(unenforced)
	return finish(res.Spec)
}

func warnUnenforced(list []string) {
	for _, u := range list {
		fmt.Fprintf(os.Stderr, "sbxrun: warning: not enforced: %s\n", strings.TrimPrefix(u, "unenforced: "))
	}
}

// containerGrants compiles the tier a container was created under (from
// its state's annotations), or nil if it has none.
func containerGrants(st *container.State) (*policy.Grants, error) {
	tier := st.Annotations[specgen.AnnotationTier]
	if tier == "" {
		return nil, nil
	}
	return policy.Compile(tier, nil, host.Probe(host.Options{Rootless: os.Geteuid() != 0}), nil)
}

// initialOnly reports whether a spec enforced under a tier asks for
// process_exec=deny. The exec annotation alone (no tier) is not honoured:
// it is the tier's grants that decide, and an untiered spec's own seccomp
// filter may not even allow the Landlock calls the shim needs.
func initialOnly(annotations map[string]string) bool {
	return annotations[specgen.AnnotationTier] != "" && annotations[specgen.AnnotationExec] == "initial-only"
}
