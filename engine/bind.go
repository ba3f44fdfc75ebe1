package engine

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// Bind binds connector to tier. Moving it to a less restrictive tier needs
// an override token; every outcome is audited.
func (e *Engine) Bind(connector, tier, token string) error {
	if connector == "" {
		return errcode.Errorf(errcode.ConfigInvalid, "bind needs a connector")
	}
	return e.bind("bind", connector, tier, e.authorizer(token).get)
}

// bind binds connector to tier and writes the audit record of the
// outcome: selection, change, override or refusal.
func (e *Engine) bind(op, connector, tier string, authorize func() (*policy.Authorization, error)) error {
	tr, auth, err := e.bindings.Bind(connector, tier, authorize)
	rec := audit.Record{Operation: op, Connector: connector, Tier: tier, Target: tr.From + "->" + tier, Policy: "no-downgrade"}
	if err != nil {
		rec.Kind, rec.Result = audit.KindRefusal, audit.ResultBlocked
		rec.Code, rec.Reason = string(errcode.Of(err)), errcode.Message(err)
		if _, aerr := e.audit.Append(rec); aerr != nil {
			return fmt.Errorf("%w (and the refusal could not be audited: %v)", err, aerr)
		}
		return err
	}
	if auth != nil {
		if _, err := e.audit.Append(audit.Record{Kind: audit.KindOverride, Operation: op, Connector: connector, Tier: tier,
			Target: rec.Target, Result: audit.ResultAllowed, Policy: "override", Reason: auth.Label}); err != nil {
			return err
		}
	}
	rec.Kind, rec.Result, rec.Reason = audit.KindChange, audit.ResultAllowed, tr.Kind
	if tr.Kind == "initial" || tr.Kind == "same" {
		rec.Kind = audit.KindSelection
	}
	_, err = e.audit.Append(rec)
	return err
}

// Binding is one connector's binding, for listing.
type Binding struct {
	Connector string
	authz.Binding
}

// ListBindings returns the bindings, sorted by connector; with connector
// set, only its own.
func (e *Engine) ListBindings(connector string) ([]Binding, error) {
	ids, all, err := e.bindings.List()
	if err != nil {
		return nil, err
	}
	var out []Binding
	for _, id := range ids {
		if connector == "" || connector == id {
			out = append(out, Binding{Connector: id, Binding: all[id]})
		}
	}
	return out, nil
}

// CreateOverride creates an override token valid for ttl and uses, audits
// its creation (label and limits, never the token), and returns the token.
func (e *Engine) CreateOverride(label string, ttl time.Duration, uses int) (string, error) {
	token, err := e.overrides.Create(label, ttl, uses)
	if err != nil {
		return "", err
	}
	if _, err := e.audit.Append(audit.Record{Kind: audit.KindOverride, Operation: "override-create",
		Result: audit.ResultAllowed, Policy: "override", Reason: label,
		Details: []string{fmt.Sprintf("ttl=%s uses=%d", ttl, uses)}}); err != nil {
		return "", err
	}
	return token, nil
}

// requireRealPaths refuses fs sources that are, or pass through, a
// symlink. The compiler checks sources lexically (e.g. against engine
// sockets); a symlink would let /home/me/proj/x point at /var/run and slip
// past it.
func (e *Engine) requireRealPaths(cfg *policy.Config) error {
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
