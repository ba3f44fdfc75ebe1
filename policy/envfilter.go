package policy

import (
	"path"
	"strings"

	"github.com/sbxrun/sbxrun/profiles"
)

// EnvFilter decides which environment variables a sandbox may receive. It
// is compiled into the Grants and is the only environment rule: the
// compiler applies it to the variables a config declares, the runtime to
// the environment of an incoming spec and of every exec'd process, and lint
// reports what it would drop.
type EnvFilter struct {
	// Mode is the effective env_access level.
	Mode profiles.Access `json:"mode"`
	// Keep are the names a sandbox keeps at env_access=deny: the baseline,
	// the per-container names engines set, and names an override authorized.
	Keep []string `json:"keep"`
	// Secret are the credential name patterns dropped below env_access=allow.
	Secret []string `json:"secret"`
	// Allow are exact names exempt from Secret (an authorized widening).
	Allow []string `json:"allow,omitempty"`
	// Deny are patterns always dropped, at every level.
	Deny []string `json:"deny,omitempty"`
}

// EnvVerdict is why a variable passes or not.
type EnvVerdict int

// Verdicts, in the order they are checked.
const (
	EnvPass       EnvVerdict = iota
	EnvDenied                // matches a Deny pattern
	EnvSecret                // looks like a credential
	EnvNotAllowed            // env_access=deny and not a kept name
)

// Check returns the verdict for one variable name.
func (f EnvFilter) Check(name string) EnvVerdict {
	switch {
	case MatchAny(name, f.Deny):
		return EnvDenied
	case f.Mode == profiles.Allow:
		return EnvPass
	case LooksSecret(name, f.Secret) && !containsStr(f.Allow, name):
		return EnvSecret
	case f.Mode == profiles.Deny && !containsStr(f.Keep, name):
		return EnvNotAllowed
	}
	return EnvPass
}

// Apply filters "NAME=value" entries, keeping their order, and returns the
// kept entries and the dropped names. An entry without "=" is kept or
// dropped by its whole text as the name.
func (f EnvFilter) Apply(env []string) (kept, dropped []string) {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if f.Check(name) != EnvPass {
			dropped = append(dropped, name)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, dropped
}

// MatchAny reports whether name matches one of the glob patterns
// (path.Match syntax; names never contain '/').
func MatchAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// LooksSecret reports whether an environment variable name matches a
// credential pattern (case-insensitively).
func LooksSecret(name string, patterns []string) bool {
	return MatchAny(strings.ToUpper(name), patterns)
}
