package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/enforce"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

// Source is where a decision's tier came from.
type Source string

// Tier sources, in precedence order.
const (
	FromFlag       Source = "flag"
	FromAnnotation Source = "annotation"
	FromConfig     Source = "config"
	FromBinding    Source = "binding"
	FromDefault    Source = "runtime.yaml"
	FromStrictest  Source = "strictest"
	// FromNone: nothing selected a tier and none was required; a spec runs
	// as given, under the runtime's own safety rules only.
	FromNone Source = "none"
)

// Request is one decision to make.
type Request struct {
	// Operation and Target name the decision in the audit log.
	Operation, Target string
	// Tier is a tier asked for explicitly, by a flag or an annotation (From).
	Tier string
	From Source
	// Connector is the identity whose binding applies (no-downgrade).
	Connector string
	// Config narrows the tier; nil is the tier's defaults.
	Config *policy.Config
	// OverrideToken authorizes a config that widens the tier and a binding
	// that loosens. Annotations never carry one.
	OverrideToken string
	// RequireTier: when nothing selects a tier, the catalog's most
	// restrictive one applies. Without it there is then no tier and an
	// incoming spec runs as given. A request with a connector always gets a
	// tier.
	RequireTier bool
	// Facts is the host compiled for.
	Facts policy.HostFacts
	// Spec is an incoming OCI spec to make comply (the runtime's create and
	// run); nil compiles only.
	Spec *specs.Spec
	// Bundle is the directory relative mount sources of Spec are relative to.
	Bundle string
}

// Decision is the outcome of Select.
type Decision struct {
	Tier      string
	From      Source
	Connector string
	// Grants are the compiled policy; nil when no tier applies.
	Grants *policy.Grants
	// Spec is Request.Spec made to comply with the tier, or as given (with
	// the runtime's own safety rules) when no tier applies.
	Spec *specs.Spec
	// Changes are what enforcement changed in the spec.
	Changes []string
	// Unenforced are the protections not applied, each with the reason.
	Unenforced []string
	// Record is the audit record written for the decision.
	Record audit.Record
}

// Select makes one decision: it selects the tier (an explicit tier, else
// the config's, else the connector's binding, else runtime.yaml's
// default_tier, else the most restrictive tier where one is required),
// binds the connector to it (a loosening needs the override token), compiles
// the config against it (a widening needs the token), enforces it on the
// incoming spec if there is one, and writes the audit records: one for the
// decision, plus one per binding change and per override used. A refusal is
// audited too, with its code, and returned as a coded error.
func (e *Engine) Select(req Request) (*Decision, error) {
	d := &Decision{Connector: req.Connector}
	rec := audit.Record{Operation: req.Operation, Target: req.Target, Connector: req.Connector}
	cfg := req.Config
	if cfg == nil {
		cfg = &policy.Config{}
	}
	auth := e.authorizer(req.OverrideToken)
	fail := func(err error) (*Decision, error) { return nil, e.refuse(rec, err) }
	var err error
	if d.Tier, d.From, err = e.pickTier(req, cfg); err != nil {
		return fail(err)
	}
	rec.Tier = d.Tier
	e.log.Debug("tier selected", "operation", req.Operation, "target", req.Target, "tier", d.Tier, "from", string(d.From), "connector", req.Connector)
	if d.Tier == "" {
		d.From = FromNone
		return e.untiered(d, req, rec)
	}
	if _, ok := e.cat.Tier(d.Tier); !ok {
		return fail(errcode.Errorf(errcode.ProfileUnknown, "unknown tier %q from the %s (one of %s)", d.Tier, d.From, strings.Join(e.cat.Names(), ", ")))
	}
	if req.Connector != "" {
		if err := e.bind(req.Operation, req.Connector, d.Tier, auth.get); err != nil {
			return fail(err)
		}
	}
	if err := e.requireRealPaths(cfg); err != nil {
		return fail(err)
	}
	g, err := e.compile(d.Tier, cfg, req.Facts, auth)
	if err != nil {
		return fail(err)
	}
	d.Grants = g
	rec.Tier, rec.Policy = g.Tier, "tier:"+g.Tier
	if g.Override != nil {
		if _, err := e.audit.Append(audit.Record{Kind: audit.KindOverride, Operation: req.Operation, Target: req.Target,
			Connector: req.Connector, Tier: g.Tier, Result: audit.ResultAllowed, Policy: "override",
			Reason: g.Override.Label, Details: g.Override.Widenings}); err != nil {
			return nil, err
		}
	}
	rec.Kind, rec.Result, rec.Reason = audit.KindCompile, audit.ResultAllowed, "tier from the "+string(d.From)
	d.Unenforced = g.Unenforced
	if req.Spec != nil {
		rec.Kind = audit.KindSelection
		if err := e.enforceSpec(d, req); err != nil {
			return fail(err)
		}
	}
	rec.Details = append(rec.Details, d.Changes...)
	for _, u := range d.Unenforced {
		rec.Details = append(rec.Details, "unenforced: "+u)
	}
	for _, n := range g.Notes {
		rec.Details = append(rec.Details, "note: "+n)
	}
	if d.Record, err = e.audit.Append(rec); err != nil {
		return nil, err
	}
	e.log.Debug("decision audited", "seq", d.Record.Seq, "kind", d.Record.Kind, "changes", len(d.Changes), "unenforced", len(d.Unenforced))
	e.warnUnenforced(d.Unenforced, req.Spec != nil)
	return d, nil
}

// pickTier selects the tier of req in the one precedence order: an
// explicit tier, the config's, the connector's binding, runtime.yaml's
// default_tier, and — where a tier is required or a connector is named —
// the most restrictive tier. It reads state but changes none; "" means no
// tier applies.
func (e *Engine) pickTier(req Request, cfg *policy.Config) (string, Source, error) {
	switch {
	case req.Tier != "":
		return req.Tier, req.From, nil
	case cfg.Tier != "":
		return cfg.Tier, FromConfig, nil
	}
	if req.Connector != "" {
		if err := authz.CheckConnector(req.Connector); err != nil {
			return "", "", err
		}
		b, ok, err := e.bindings.Get(req.Connector)
		if err != nil {
			return "", "", err
		}
		if ok {
			return b.Tier, FromBinding, nil
		}
	}
	rc, err := LoadRuntimeConfig(e.configDir, e.euid, e.cat)
	if err != nil {
		return "", "", err
	}
	if rc.DefaultTier != "" {
		return rc.DefaultTier, FromDefault, nil
	}
	if req.RequireTier || req.Connector != "" {
		return strictest(e.cat), FromStrictest, nil
	}
	return "", FromNone, nil
}

// enforceSpec makes the incoming spec comply with d.Grants. This runtime
// enforces process_exec=deny itself (the Landlock exec shim), so that
// protection leaves the unenforced list here; without Landlock the spec is
// refused instead.
func (e *Engine) enforceSpec(d *Decision, req Request) error {
	g, in, facts := d.Grants, req.Spec, req.Facts
	resolved, missing, err := resolveBinds(in, req.Bundle)
	if err != nil {
		return err
	}
	res, err := enforce.Enforce(in, g)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		// A source that appears only later could appear as a symlink.
		return &errcode.Error{Code: errcode.SpecInvalid, Msg: "bind mount sources must exist", Details: missing}
	}
	d.Spec, d.Changes = res.Spec, append(resolved, res.Changes...)
	d.Unenforced = append(slices.Clone(d.Unenforced), res.Unenforced...)
	if g.Exec.InitialOnly {
		if facts.LandlockABI == 0 {
			return errcode.Errorf(errcode.Unenforceable, "tier %s needs process_exec=deny and this kernel has no Landlock", g.Tier)
		}
		d.Unenforced = slices.DeleteFunc(slices.Clone(d.Unenforced), func(u string) bool { return strings.HasPrefix(u, "process_exec=") })
		d.Changes = append(d.Changes, fmt.Sprintf("process_exec=deny: enforced by the Landlock exec shim (ABI %d)", facts.LandlockABI))
	}
	return e.compat(d)
}

// untiered decides a request no tier applies to: an incoming spec runs as
// given, except for the runtime's own safety rules (no shared propagation;
// limits a rootless caller cannot apply are reported, not silently lost).
func (e *Engine) untiered(d *Decision, req Request, rec audit.Record) (*Decision, error) {
	rec.Kind, rec.Result, rec.Policy = audit.KindSelection, audit.ResultAllowed, "no-tier"
	rec.Reason = "no tier annotation, binding or default tier: the spec runs as given"
	if req.Spec != nil {
		d.Spec = req.Spec
		d.Changes = enforce.NoSharedPropagation(d.Spec)
		if e.Rootless() && !req.Facts.CgroupLimits {
			d.Unenforced = enforce.StripCgroupLimits(d.Spec)
		}
		if err := e.compat(d); err != nil {
			return nil, e.refuse(rec, err)
		}
	}
	rec.Details = append(append(rec.Details, d.Changes...), d.Unenforced...)
	var err error
	if d.Record, err = e.audit.Append(rec); err != nil {
		return nil, err
	}
	e.warnUnenforced(d.Unenforced, true)
	return d, nil
}

// compat applies libcontainer's compatibility adjustments to the final
// spec; each is a change on the record.
func (e *Engine) compat(d *Decision) error {
	changes, err := container.Compat(d.Spec)
	if err != nil {
		return errcode.Errorf(errcode.SpecNoncompliant, "%v", err)
	}
	d.Changes = append(d.Changes, changes...)
	return nil
}

// compile compiles tier with cfg. A config that needs an override (and
// only such a config) consumes a use of the token.
func (e *Engine) compile(tier string, cfg *policy.Config, facts policy.HostFacts, auth *authorizer) (*policy.Grants, error) {
	g, err := policy.CompileWith(e.cat, tier, cfg, facts, nil)
	if errors.Is(err, policy.ErrNeedsOverride) && auth.token != "" {
		a, aerr := auth.get()
		if aerr != nil {
			return nil, aerr
		}
		g, err = policy.CompileWith(e.cat, tier, cfg, facts, a)
	}
	return g, err
}

// refuse audits a refusal and returns err; if the refusal cannot be
// audited, both errors are returned.
func (e *Engine) refuse(rec audit.Record, err error) error {
	e.log.Debug("refused", "operation", rec.Operation, "target", rec.Target, "code", string(errcode.Of(err)))
	rec.Kind, rec.Result = audit.KindRefusal, audit.ResultBlocked
	rec.Code, rec.Reason, rec.Details = string(errcode.Of(err)), errcode.Message(err), errcode.DetailsOf(err)
	if _, aerr := e.audit.Append(rec); aerr != nil {
		return fmt.Errorf("%w (and the refusal could not be audited: %v)", err, aerr)
	}
	return err
}

// warnUnenforced reports each protection that is not applied. At run time
// it is simply not enforced; for a compiled artifact, another runtime may
// still lack what sbxrun would add.
func (e *Engine) warnUnenforced(list []string, running bool) {
	msg := "not enforced by this spec alone"
	if running {
		msg = "not enforced"
	}
	for _, u := range list {
		e.log.Warn(msg + ": " + u)
	}
}

// authorizer verifies an override token at most once, on first need, so a
// request that needs no override never consumes a use.
type authorizer struct {
	e     *Engine
	token string
	auth  *policy.Authorization
	err   error
	done  bool
}

func (e *Engine) authorizer(token string) *authorizer { return &authorizer{e: e, token: token} }

func (a *authorizer) get() (*policy.Authorization, error) {
	if a.token == "" {
		return nil, nil
	}
	if !a.done {
		a.auth, a.err = a.e.overrides.Use(a.token)
		a.done = true
	}
	return a.auth, a.err
}

// strictest is the most restrictive tier of the catalog.
func strictest(cat *profiles.Catalog) string { return cat.Tiers[0].Name }
