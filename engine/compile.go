package engine

import (
	"fmt"
	"io"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/enforce"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/hooks"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
	"github.com/sbxrun/sbxrun/specgen"
)

// Spec formats.
const (
	FormatOCI     = "oci"
	FormatSeccomp = "seccomp"
	FormatGrants  = "grants"
)

// Render compiles req (a tier is required: the most restrictive when none
// is selected) and renders it: the full OCI spec, the docker/podman seccomp
// profile, or the Grants themselves. The compile is audited.
func (e *Engine) Render(req Request, format string) ([]byte, *Decision, error) {
	switch format {
	case FormatOCI, FormatSeccomp, FormatGrants:
	default:
		return nil, nil, errcode.Errorf(errcode.ConfigInvalid, "format must be %s, %s or %s, not %q", FormatOCI, FormatSeccomp, FormatGrants, format)
	}
	req.RequireTier = true
	d, err := e.Select(req)
	if err != nil {
		return nil, nil, err
	}
	var v any = d.Grants
	switch format {
	case FormatOCI:
		if v, err = specgen.Generate(d.Grants, specgen.Options{}); err != nil {
			return nil, nil, err
		}
	case FormatSeccomp:
		if v, err = specgen.Seccomp(d.Grants); err != nil {
			return nil, nil, err
		}
	}
	data, err := specgen.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding %s: %w", format, err)
	}
	return data, d, nil
}

// LintResult is the outcome of Lint.
type LintResult struct {
	Tier       string              `json:"tier"`
	Compliant  bool                `json:"compliant"`
	Violations []enforce.Violation `json:"violations"`
}

// Lint checks spec against the tier it would run under: --tier, else the
// spec's dev.sbx.tier annotation, else the config's tier, else the binding
// of the spec's dev.sbx.connector annotation, else runtime.yaml's
// default_tier (the one precedence order; nothing is bound or written).
// With none of these there is nothing to check against. A non-compliant
// spec is a result, not an error.
func (e *Engine) Lint(spec *specs.Spec, tier string, cfg *policy.Config, facts policy.HostFacts) (*LintResult, error) {
	if cfg == nil {
		cfg = &policy.Config{}
	}
	req := Request{Tier: tier, From: FromFlag, Config: cfg}
	if req.Tier == "" {
		req.Tier, req.From = spec.Annotations[specgen.AnnotationTier], FromAnnotation
	}
	if req.Tier == "" {
		req.Connector = spec.Annotations[specgen.AnnotationConnector]
	}
	tier, _, err := e.pickTier(req, cfg)
	if err != nil {
		return nil, err
	}
	if tier == "" {
		return nil, errcode.Errorf(errcode.ProfileUnknown, "no tier given, and the spec names none (%s, %s) nor does the config or runtime.yaml", specgen.AnnotationTier, specgen.AnnotationConnector)
	}
	g, err := policy.CompileWith(e.cat, tier, cfg, facts, nil)
	if err != nil {
		return nil, err
	}
	vs := append([]enforce.Violation{}, enforce.Lint(spec, g)...)
	return &LintResult{Tier: g.Tier, Compliant: len(vs) == 0, Violations: vs}, nil
}

// Explanation is what a tier allows on this host, and why.
type Explanation struct {
	Tier   *profiles.Tier
	Grants *policy.Grants
	// HostUID and HostGID are who the workload is on the host when it runs
	// in a user namespace (rootless: the caller).
	HostUID, HostGID uint32
}

// Explain compiles the tier selected in the one precedence order (tier,
// else the config's, else runtime.yaml's default, else the most
// restrictive) with cfg for this host, as this caller would run it:
// rootless when the caller is not root, or when asked. It writes no audit
// record.
func (e *Engine) Explain(tier string, cfg *policy.Config, rootless bool) (*Explanation, error) {
	if cfg == nil {
		cfg = &policy.Config{}
	}
	tier, _, err := e.pickTier(Request{Tier: tier, From: FromFlag, RequireTier: true}, cfg)
	if err != nil {
		return nil, err
	}
	t, ok := e.cat.Tier(tier)
	if !ok {
		return nil, errcode.Errorf(errcode.ProfileUnknown, "unknown tier %q (one of %s)", tier, strings.Join(e.cat.Names(), ", "))
	}
	facts := e.Facts(FactsOptions{Rootless: rootless || e.Rootless()})
	g, err := policy.CompileWith(e.cat, tier, cfg, facts, nil)
	if err != nil {
		return nil, err
	}
	x := &Explanation{Tier: t, Grants: g, HostUID: g.Identity.UID, HostGID: g.Identity.GID}
	if m := g.Identity.UIDMap; m != nil && g.Identity.UID >= m.ContainerID && g.Identity.UID-m.ContainerID < m.Size {
		x.HostUID = m.HostID + g.Identity.UID - m.ContainerID
	}
	if m := g.Identity.GIDMap; m != nil && g.Identity.GID >= m.ContainerID && g.Identity.GID-m.ContainerID < m.Size {
		x.HostGID = m.HostID + g.Identity.GID - m.ContainerID
	}
	return x, nil
}

// Hook records an OCI hook invocation: the container state on r, the
// stage named by the hook's argument.
func (e *Engine) Hook(stage string, r io.Reader) error {
	st, err := hooks.ReadState(r)
	if err != nil {
		return err
	}
	rec, err := hooks.Record(stage, st)
	if err != nil {
		return err
	}
	_, err = e.audit.Append(rec)
	return err
}

// ReadLog reads the audit log: every record, after checking each line is
// canonical. A missing log has no records.
func (e *Engine) ReadLog() ([]audit.Record, error) {
	return e.audit.ReadAll()
}

// VerifyLog verifies the audit log's hash chain.
func (e *Engine) VerifyLog() (audit.Summary, error) {
	return e.audit.Verify()
}
