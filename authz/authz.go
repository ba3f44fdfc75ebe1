// Package authz owns the persistent state behind the no-downgrade rule:
// which tier each connector (an agent or process identity) is bound to, and
// the override tokens that may authorize a move to a less restrictive tier
// or a config that widens one.
//
// Bindings live in <state dir>/bindings.json and are rewritten atomically
// (temp file, fsync, rename) under an exclusive lock, so concurrent callers
// never lose an update or read a torn file. Override tokens are random
// secrets shown once at creation; only their SHA-256 is stored, in a file
// that must be owned by root (or, for a rootless caller, by that user) and
// writable by nobody else — otherwise it is not trusted at all.
package authz

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

// Binding is one connector's tier.
type Binding struct {
	Tier    string `json:"tier"`
	Level   int    `json:"level"`
	Updated string `json:"updated"`
}

type bindingsFile struct {
	Version  int                `json:"version"`
	Bindings map[string]Binding `json:"bindings"`
}

// Bindings is the binding store in a state directory.
type Bindings struct {
	Dir string
	// Owner is the uid the file and its directory must belong to: 0 for the
	// system store, the caller's uid for a rootless caller's own.
	Owner int
	// Catalog names the tiers and their levels.
	Catalog *profiles.Catalog
	now     func() time.Time
}

// OpenBindings returns the store in dir (created on first write), trusted
// only if owned by owner, with the tiers of cat.
func OpenBindings(dir string, owner int, cat *profiles.Catalog) *Bindings {
	return &Bindings{Dir: dir, Owner: owner, Catalog: cat, now: time.Now}
}

// connectorRE is compiled on first use (not at package init, which every
// sbxrun process would pay for).
var connectorRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$`)
})

// CheckConnector validates a connector id.
func CheckConnector(id string) error {
	if !connectorRE().MatchString(id) {
		return errcode.Errorf(errcode.ConfigInvalid, "connector id %q: want 1-128 of [A-Za-z0-9._:@-], starting with a letter or digit", id)
	}
	return nil
}

// Transition describes a tier move.
type Transition struct {
	Connector string
	From      string // "" when the connector was unbound
	FromLevel int
	To        string
	ToLevel   int
	// Kind is "initial", "same", "tighten" or "loosen".
	Kind string
}

// Classify decides what moving from one tier to another is. Pure.
func Classify(from *profiles.Tier, to *profiles.Tier) string {
	switch {
	case from == nil:
		return "initial"
	case to.Level == from.Level:
		return "same"
	case to.Level < from.Level:
		return "tighten"
	default:
		return "loosen"
	}
}

// Get returns a connector's binding.
func (b *Bindings) Get(connector string) (Binding, bool, error) {
	f, err := b.read()
	if err != nil {
		return Binding{}, false, err
	}
	bd, ok := f.Bindings[connector]
	return bd, ok, nil
}

// List returns all bindings sorted by connector.
func (b *Bindings) List() ([]string, map[string]Binding, error) {
	f, err := b.read()
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, 0, len(f.Bindings))
	for id := range f.Bindings {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, f.Bindings, nil
}

// Bind moves connector to tier. A move to a less restrictive tier (higher
// level) is refused with SANDBOX_DOWNGRADE_BLOCKED unless authorize returns
// an authorization; authorize is called only for such a move, so a token is
// never consumed by a move that did not need it. The returned Transition
// and Authorization describe what happened, for the audit log, also on
// refusal.
func (b *Bindings) Bind(connector, tierName string, authorize func() (*policy.Authorization, error)) (Transition, *policy.Authorization, error) {
	tr := Transition{Connector: connector, To: tierName}
	if err := CheckConnector(connector); err != nil {
		return tr, nil, err
	}
	to, ok := b.Catalog.Tier(tierName)
	if !ok {
		return tr, nil, errcode.Errorf(errcode.ProfileUnknown, "unknown tier %q (one of %s)", tierName, strings.Join(b.Catalog.Names(), ", "))
	}
	tr.ToLevel = to.Level
	var auth *policy.Authorization
	err := withLock(filepath.Join(b.Dir, "bindings.lock"), func() error {
		f, err := b.read()
		if err != nil {
			return err
		}
		var from *profiles.Tier
		if cur, ok := f.Bindings[connector]; ok {
			tr.From, tr.FromLevel = cur.Tier, cur.Level
			if from, ok = b.Catalog.Tier(cur.Tier); !ok {
				return errcode.Errorf(errcode.StateUntrusted, "connector %s is bound to unknown tier %q; fix or remove %s", connector, cur.Tier, b.path())
			}
		}
		tr.Kind = Classify(from, to)
		switch tr.Kind {
		case "same":
			return nil
		case "loosen":
			if authorize == nil {
				return downgrade(tr)
			}
			if auth, err = authorize(); err != nil {
				return err
			}
			if auth == nil {
				return downgrade(tr)
			}
		}
		f.Bindings[connector] = Binding{Tier: to.Name, Level: to.Level, Updated: b.now().UTC().Format(time.RFC3339)}
		return writeJSONAtomic(b.path(), f, 0o644)
	})
	return tr, auth, err
}

func downgrade(tr Transition) error {
	return errcode.Errorf(errcode.DowngradeBlocked, "connector %s is bound to %s (level %d); moving to the less restrictive %s (level %d) needs an override token",
		tr.Connector, tr.From, tr.FromLevel, tr.To, tr.ToLevel)
}

func (b *Bindings) path() string { return filepath.Join(b.Dir, "bindings.json") }

// read loads the bindings. A missing file is an empty store; a file someone
// else could have written, or one that does not parse, is refused: it
// decides tiers.
func (b *Bindings) read() (*bindingsFile, error) {
	f := &bindingsFile{Version: 1, Bindings: map[string]Binding{}}
	if err := CheckTrusted(errcode.StateUntrusted, b.Owner, b.path()); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return f, nil
		}
		return nil, err
	}
	data, err := os.ReadFile(b.path())
	if err != nil {
		return nil, fmt.Errorf("reading bindings: %w", err)
	}
	if err := decodeStrict(data, f); err != nil {
		return nil, errcode.Errorf(errcode.StateUntrusted, "bindings file %s is corrupt: %v", b.path(), err)
	}
	if f.Bindings == nil {
		f.Bindings = map[string]Binding{}
	}
	return f, nil
}
