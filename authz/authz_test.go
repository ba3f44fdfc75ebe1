package authz

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

func noAuth() (*policy.Authorization, error) { return nil, nil }

func TestBindTransitions(t *testing.T) {
	b := OpenBindings(t.TempDir(), os.Geteuid(), profiles.Builtin())
	steps := []struct {
		tier, kind string
		code       errcode.Code
	}{
		{"moderate", "initial", ""},
		{"moderate", "same", ""},
		{"strict", "tighten", ""},
		{"permissive", "loosen", errcode.DowngradeBlocked},
		{"strict_plus", "loosen", errcode.DowngradeBlocked},
		{"lax", "", errcode.ProfileUnknown},
	}
	for _, s := range steps {
		tr, _, err := b.Bind("agent-1", s.tier, noAuth)
		if errcode.Of(err) != s.code && !(s.code == "" && err == nil) {
			t.Fatalf("bind %s: err %v, want %s", s.tier, err, s.code)
		}
		if s.kind != "" && tr.Kind != s.kind {
			t.Errorf("bind %s: kind %s, want %s", s.tier, tr.Kind, s.kind)
		}
	}
	cur, ok, err := b.Get("agent-1")
	if err != nil || !ok || cur.Tier != "strict" {
		t.Errorf("binding after refusals = %+v %v %v, want strict", cur, ok, err)
	}
	if _, _, err := b.Bind("bad id!", "strict", noAuth); errcode.Of(err) != errcode.ConfigInvalid {
		t.Errorf("bad connector id: %v", err)
	}
}

func TestOverrideTokenAuthorizesOnce(t *testing.T) {
	dir := t.TempDir()
	o := OpenOverrides(filepath.Join(dir, "conf"), os.Geteuid())
	tok, err := o.Create("incident-7", time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := OpenBindings(filepath.Join(dir, "state"), os.Geteuid(), profiles.Builtin())
	if _, _, err := b.Bind("a", "strict", noAuth); err != nil {
		t.Fatal(err)
	}
	use := func() (*policy.Authorization, error) { return o.Use(tok) }
	tr, auth, err := b.Bind("a", "permissive", use)
	if err != nil || auth == nil || tr.Kind != "loosen" {
		t.Fatalf("authorized loosen: %+v %v %v", tr, auth, err)
	}
	b.Bind("a", "strict", noAuth)
	if _, _, err := b.Bind("a", "permissive", use); errcode.Of(err) != errcode.OverrideInvalid {
		t.Errorf("second use of a single-use token: %v", err)
	}
	if _, err := o.Use(tok[:len(tok)-1] + "A"); errcode.Of(err) != errcode.OverrideInvalid {
		t.Errorf("wrong token accepted: %v", err)
	}
	if _, err := o.Use("hunter2"); errcode.Of(err) != errcode.OverrideInvalid {
		t.Errorf("malformed token accepted: %v", err)
	}
}

func TestOverrideExpiresAndStoreTrust(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	o := OpenOverrides(dir, os.Geteuid())
	tok, err := o.Create("x", time.Hour, 5)
	if err != nil {
		t.Fatal(err)
	}
	o.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := o.Use(tok); errcode.Of(err) != errcode.OverrideInvalid {
		t.Errorf("expired token accepted: %v", err)
	}
	o.now = time.Now
	if err := os.Chmod(filepath.Join(dir, "override-tokens.json"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Use(tok); errcode.Of(err) != errcode.OverrideInvalid {
		t.Errorf("world-writable store trusted: %v", err)
	}
	os.Chmod(filepath.Join(dir, "override-tokens.json"), 0o600)
	if os.Chown(filepath.Join(dir, "override-tokens.json"), 12345, 12345) == nil {
		if _, err := o.Use(tok); errcode.Of(err) != errcode.OverrideInvalid {
			t.Errorf("store owned by another uid trusted: %v", err)
		}
		os.Chown(filepath.Join(dir, "override-tokens.json"), os.Geteuid(), os.Getegid())
	}
	if _, err := o.Use(tok); err != nil {
		t.Errorf("valid token refused: %v", err)
	}
}

func TestConcurrentBindsKeepEveryConnector(t *testing.T) {
	b := OpenBindings(t.TempDir(), os.Geteuid(), profiles.Builtin())
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, _, err := b.Bind("c"+string(rune('a'+i)), "strict", noAuth); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	ids, _, err := b.List()
	if err != nil || len(ids) != 20 {
		t.Errorf("after concurrent binds: %d bindings, %v", len(ids), err)
	}
}

// TestBindingsTrust: the bindings file decides tiers, so one that someone
// else could have written, or that does not parse, is refused rather than
// read (a world-writable file could rebind a connector to permissive).
func TestBindingsTrust(t *testing.T) {
	dir := t.TempDir()
	b := OpenBindings(dir, os.Geteuid(), profiles.Builtin())
	if _, _, err := b.Bind("a", "strict", noAuth); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "bindings.json")
	if _, ok, err := b.Get("a"); err != nil || !ok {
		t.Fatalf("paired trusted read: %v %v", ok, err)
	}
	os.Chmod(file, 0o666)
	if _, _, err := b.Get("a"); errcode.Of(err) != errcode.StateUntrusted {
		t.Errorf("world-writable bindings read: %v", err)
	}
	os.Chmod(file, 0o644)
	os.Chmod(dir, 0o777)
	if _, _, err := b.Get("a"); errcode.Of(err) != errcode.StateUntrusted {
		t.Errorf("bindings in a world-writable directory read: %v", err)
	}
	os.Chmod(dir, 0o700)
	if os.Chown(file, 12345, 12345) == nil {
		if _, _, err := b.Get("a"); errcode.Of(err) != errcode.StateUntrusted {
			t.Errorf("bindings owned by another uid read: %v", err)
		}
		os.Chown(file, os.Geteuid(), os.Getegid())
	}
	os.WriteFile(file, []byte(`{"version":1,"bindings":{"a":{"tier":"strict"`), 0o644)
	if _, _, err := b.Bind("a", "permissive", noAuth); errcode.Of(err) != errcode.StateUntrusted {
		t.Errorf("corrupt bindings: %v", err)
	}
	os.WriteFile(file, []byte(`{"version":1,"bindings":{"a":{"tier":"lax","level":0,"updated":""}}}`), 0o644)
	if _, _, err := b.Bind("a", "strict", noAuth); errcode.Of(err) != errcode.StateUntrusted {
		t.Errorf("binding to an unknown tier: %v", err)
	}
	os.Remove(file)
	if _, ok, err := b.Get("a"); err != nil || ok {
		t.Errorf("a missing file is an empty store: %v %v", ok, err)
	}
}
