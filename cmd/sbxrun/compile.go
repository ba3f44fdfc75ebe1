package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
)

// The flags every compiling verb shares.
func compileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tier", Usage: "sandbox tier: strict, strict_plus, moderate or permissive (default: the config's tier, else the connector's binding, else strict)"},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML config that narrows the tier ('-' for stdin)"},
		&cli.StringFlag{Name: "connector", Usage: "agent/process id whose tier binding applies (no-downgrade)"},
		&cli.BoolFlag{Name: "rootless", Usage: "compile for an unprivileged caller (user namespace, no cgroups unless delegated)"},
		&cli.StringFlag{Name: "arch", Usage: "target architecture: amd64 or arm64 (default: this machine's)"},
		&cli.BoolFlag{Name: "reference-host", Usage: "compile for the documented reference host instead of this one (machine-independent output)"},
		&cli.StringFlag{Name: "override-token", Usage: "override token authorizing a widening or a downgrade", EnvVars: []string{"SBXRUN_OVERRIDE_TOKEN"}},
	}
}

// probeFacts returns this host's facts, or the reference host's with
// --reference-host (rootless and arch still apply).
func probeFacts(c *cli.Context) policy.HostFacts {
	f := host.Probe(host.Options{Rootless: c.Bool("rootless"), Arch: c.String("arch")})
	if c.Bool("reference-host") {
		ref := policy.ReferenceFacts(f.Arch, f.Syscalls)
		ref.Rootless, ref.UID, ref.GID = f.Rootless, f.UID, f.GID
		if f.Rootless {
			ref.CgroupLimits = false
		}
		return ref
	}
	return f
}

func auditLog(c *cli.Context) *audit.Log {
	p := c.String("audit-log")
	if p == "" {
		p = audit.DefaultPath(c.String("state-dir"))
	}
	return audit.Open(p)
}

func overrideStore(c *cli.Context) *authz.Overrides {
	return authz.OpenOverrides(c.String("config-dir"), os.Geteuid())
}

func readConfig(path string) (*policy.Config, error) {
	if path == "" {
		return &policy.Config{}, nil
	}
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(os.Stdin, 1<<20+1))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "reading config: %v", err)
	}
	return policy.ParseConfig(data)
}

// requireRealPaths refuses fs sources that are, or pass through, a symlink.
// The compiler checks sources lexically (e.g. against engine sockets); a
// symlink would let /home/me/proj/x point at /var/run and slip past it.
func requireRealPaths(cfg *policy.Config) error {
	check := func(field string, ms []policy.PathMount) error {
		for i, m := range ms {
			if policy.CheckPath(m.Source) != nil {
				continue // reported by Compile with the full list
			}
			real, err := filepath.EvalSymlinks(m.Source)
			if err != nil {
				return errcode.Errorf(errcode.ConfigInvalid, "%s[%d].source %s: %v", field, i, m.Source, err)
			}
			if real != m.Source {
				return errcode.Errorf(errcode.PolicyConflict, "%s[%d].source %s passes through a symlink (to %s); give the real path", field, i, m.Source, real)
			}
		}
		return nil
	}
	if err := check("fs.read", cfg.FS.Read); err != nil {
		return err
	}
	return check("fs.write", cfg.FS.Write)
}

// compileRequest runs the whole pipeline a verb needs: read config, resolve
// the tier (flag, config, connector binding), verify an override token if
// one is given and needed, probe the host, compile, and audit the outcome.
type compileRequest struct {
	Operation string   // audit operation, e.g. "spec"
	Target    string   // audit target, e.g. the output path
	Args      []string // process args that replace the config's
}

func compileFromFlags(c *cli.Context, req compileRequest) (*policy.Grants, error) {
	log := auditLog(c)
	cfg, err := readConfig(c.String("config"))
	if err != nil {
		return nil, err
	}
	if len(req.Args) > 0 {
		cfg.Process.Args = req.Args
	}
	tier := c.String("tier")
	if tier == "" {
		tier = cfg.Tier
	}
	token := c.String("override-token")
	if token == "" {
		token = cfg.OverrideToken
	}
	var auth *policy.Authorization
	authorize := func() (*policy.Authorization, error) {
		if auth != nil || token == "" {
			return auth, nil
		}
		a, err := overrideStore(c).Use(token)
		if err != nil {
			return nil, err
		}
		auth = a
		return a, nil
	}
	connector := c.String("connector")
	if connector != "" {
		if tier == "" {
			if b, ok, err := authz.OpenBindings(c.String("state-dir")).Get(connector); err != nil {
				return nil, err
			} else if ok {
				tier = b.Tier
			}
		}
		if tier == "" {
			tier = "strict"
		}
		if err := bindAndAudit(c, connector, tier, authorize); err != nil {
			return nil, err
		}
	}
	if tier == "" {
		tier = "strict"
	}
	fail := func(err error) (*policy.Grants, error) {
		_, aerr := log.Append(audit.Record{Kind: audit.KindRefusal, Operation: req.Operation, Target: req.Target,
			Connector: connector, Tier: tier, Result: audit.ResultBlocked, Code: string(errcode.Of(err)),
			Reason: oneLineReason(err), Details: details(err)})
		if aerr != nil {
			return nil, fmt.Errorf("%w (and the refusal could not be audited: %v)", err, aerr)
		}
		return nil, err
	}
	if err := requireRealPaths(cfg); err != nil {
		return fail(err)
	}
	facts := probeFacts(c)
	g, err := policy.Compile(tier, cfg, facts, nil)
	if errcode.Of(err) == errcode.PolicyConflict && token != "" {
		// Only a config that needs an override consumes a token use.
		a, aerr := authorize()
		if aerr != nil {
			return fail(aerr)
		}
		g, err = policy.Compile(tier, cfg, facts, a)
	}
	if err != nil {
		return fail(err)
	}
	if g.Override != nil {
		if _, err := log.Append(audit.Record{Kind: audit.KindOverride, Operation: req.Operation, Target: req.Target,
			Connector: connector, Tier: g.Tier, Result: audit.ResultAllowed, Policy: "override",
			Reason: g.Override.Label, Details: g.Override.Widenings}); err != nil {
			return nil, err
		}
	}
	rec := audit.Record{Kind: audit.KindCompile, Operation: req.Operation, Target: req.Target, Connector: connector,
		Tier: g.Tier, Result: audit.ResultAllowed, Policy: "tier:" + g.Tier}
	for _, u := range g.Unenforced {
		rec.Details = append(rec.Details, "unenforced: "+u)
	}
	for _, n := range g.Notes {
		rec.Details = append(rec.Details, "note: "+n)
	}
	if _, err := log.Append(rec); err != nil {
		return nil, err
	}
	return g, nil
}

// bindAndAudit binds connector to tier and writes the audit record for the
// outcome: selection, change, override or refusal.
func bindAndAudit(c *cli.Context, connector, tier string, authorize func() (*policy.Authorization, error)) error {
	log := auditLog(c)
	tr, auth, err := authz.OpenBindings(c.String("state-dir")).Bind(connector, tier, authorize)
	if err != nil {
		rec := audit.Record{Kind: audit.KindRefusal, Operation: "bind", Connector: connector, Tier: tier,
			Target: tr.From + "->" + tier, Result: audit.ResultBlocked, Code: string(errcode.Of(err)), Reason: oneLineReason(err),
			Policy: "no-downgrade"}
		if _, aerr := log.Append(rec); aerr != nil {
			return fmt.Errorf("%w (and the refusal could not be audited: %v)", err, aerr)
		}
		return err
	}
	kind := audit.KindChange
	if tr.Kind == "initial" || tr.Kind == "same" {
		kind = audit.KindSelection
	}
	if auth != nil {
		if _, err := log.Append(audit.Record{Kind: audit.KindOverride, Operation: "bind", Connector: connector, Tier: tier,
			Target: tr.From + "->" + tier, Result: audit.ResultAllowed, Policy: "override", Reason: auth.Label}); err != nil {
			return err
		}
	}
	_, err = log.Append(audit.Record{Kind: kind, Operation: "bind", Connector: connector, Tier: tier,
		Target: tr.From + "->" + tier, Result: audit.ResultAllowed, Policy: "no-downgrade", Reason: tr.Kind})
	return err
}

func oneLineReason(err error) string {
	var pe *errcode.Error
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func details(err error) []string {
	var pe *errcode.Error
	if errors.As(err, &pe) {
		return pe.Details
	}
	return nil
}
