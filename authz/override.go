package authz

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// TokenPrefix starts every override token, so secret scanners can find
// leaked ones.
const TokenPrefix = "sbxo_"

type tokenEntry struct {
	ID       string `json:"id"`
	SHA256   string `json:"sha256"`
	Label    string `json:"label"`
	Created  string `json:"created"`
	Expires  string `json:"expires"`
	UsesLeft int    `json:"uses_left"`
}

type tokensFile struct {
	Version int          `json:"version"`
	Tokens  []tokenEntry `json:"tokens"`
}

// Overrides is the override token store in a config directory.
type Overrides struct {
	Dir string
	// Owner is the uid the store must belong to: 0 for the system store, the
	// caller's uid for a rootless caller's own store.
	Owner int
	now   func() time.Time
}

// OpenOverrides returns the store in dir, trusted only if owned by owner.
func OpenOverrides(dir string, owner int) *Overrides {
	return &Overrides{Dir: dir, Owner: owner, now: time.Now}
}

func (o *Overrides) path() string { return filepath.Join(o.Dir, "override-tokens.json") }

// Create makes a token valid for ttl and uses, stores its hash, and returns
// the token. It is shown once: nothing can recover it later.
func (o *Overrides) Create(label string, ttl time.Duration, uses int) (string, error) {
	if label == "" || len(label) > 200 || strings.ContainsAny(label, "\n\r\x00") {
		return "", errcode.Errorf(errcode.ConfigInvalid, "override label must be 1-200 characters on one line")
	}
	if ttl <= 0 || ttl > 30*24*time.Hour {
		return "", errcode.Errorf(errcode.ConfigInvalid, "override ttl must be between 1s and 720h")
	}
	if uses < 1 || uses > 1000 {
		return "", errcode.Errorf(errcode.ConfigInvalid, "override uses must be 1-1000")
	}
	idb, secret := make([]byte, 4), make([]byte, 32)
	if _, err := rand.Read(idb); err != nil {
		return "", fmt.Errorf("generating token: %w", err)
	}
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("generating token: %w", err)
	}
	id := hex.EncodeToString(idb)
	token := TokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(secret)
	sum := sha256.Sum256([]byte(token))
	now := o.now().UTC()
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", o.Dir, err)
	}
	err := withLock(o.path()+".lock", func() error {
		f, err := o.read()
		if err != nil {
			return err
		}
		f.Tokens = append(f.Tokens, tokenEntry{ID: id, SHA256: hex.EncodeToString(sum[:]), Label: label,
			Created: now.Format(time.RFC3339), Expires: now.Add(ttl).Format(time.RFC3339), UsesLeft: uses})
		return writeJSONAtomic(o.path(), f, 0o600)
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Use verifies token and consumes one use. Any failure is
// SANDBOX_OVERRIDE_INVALID with a reason that never echoes the token.
func (o *Overrides) Use(token string) (*policy.Authorization, error) {
	id, ok := tokenID(token)
	if !ok {
		return nil, errcode.Errorf(errcode.OverrideInvalid, "override token is malformed")
	}
	if err := o.trusted(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(token))
	var auth *policy.Authorization
	err := withLock(o.path()+".lock", func() error {
		f, err := o.read()
		if err != nil {
			return err
		}
		now := o.now().UTC()
		for i, t := range f.Tokens {
			want, err := hex.DecodeString(t.SHA256)
			if t.ID != id || err != nil || subtle.ConstantTimeCompare(want, sum[:]) != 1 {
				continue
			}
			exp, err := time.Parse(time.RFC3339, t.Expires)
			if err != nil || !now.Before(exp) {
				return errcode.Errorf(errcode.OverrideInvalid, "override token %s (%s) has expired", t.ID, t.Label)
			}
			if t.UsesLeft < 1 {
				return errcode.Errorf(errcode.OverrideInvalid, "override token %s (%s) is used up", t.ID, t.Label)
			}
			f.Tokens[i].UsesLeft--
			auth = &policy.Authorization{Label: t.Label + " (token " + t.ID + ")"}
			return writeJSONAtomic(o.path(), f, 0o600)
		}
		return errcode.Errorf(errcode.OverrideInvalid, "override token is not known to this host")
	})
	return auth, err
}

func tokenID(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok {
		return "", false
	}
	id, secret, ok := strings.Cut(rest, "_")
	if !ok || len(id) != 8 || len(secret) != 43 {
		return "", false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	return id, true
}

func (o *Overrides) read() (*tokensFile, error) {
	f := &tokensFile{Version: 1}
	data, err := os.ReadFile(o.path())
	if os.IsNotExist(err) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading override tokens: %w", err)
	}
	if err := decodeStrict(data, f); err != nil {
		return nil, errcode.Errorf(errcode.OverrideInvalid, "override token store is corrupt: %v", err)
	}
	return f, nil
}
