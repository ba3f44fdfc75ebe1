package engine

import (
	"os"
	"testing"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// TestConflictingConfigSpendsNoOverride: a config that can never compile
// (written for another tier) is refused without using the override token;
// the token's single use is still there for the widening it was made for.
func TestConflictingConfigSpendsNoOverride(t *testing.T) {
	e, _ := testEngine(t, os.Geteuid())
	tok, err := e.CreateOverride("one-widening", time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	facts := e.runtimeFacts()
	other := &policy.Config{Tier: "moderate"}
	if _, err := e.Select(Request{Operation: "t", Tier: "strict", From: FromFlag, Config: other, OverrideToken: tok, Facts: facts}); errcode.Of(err) != errcode.PolicyConflict {
		t.Fatalf("config for another tier: %v, want %s", err, errcode.PolicyConflict)
	}
	wide := &policy.Config{Limits: policy.LimitsConfig{Pids: 1000}}
	dec, err := e.Select(Request{Operation: "t", Tier: "strict", From: FromFlag, Config: wide, OverrideToken: tok, Facts: facts})
	if err != nil || dec.Grants.Override == nil {
		t.Errorf("the widening the token was made for: %v (the refused conflicting config spent its use)", err)
	}
}

// TestExplainTakesTheConfigTier: explain follows the one precedence order:
// with no --tier, the config's tier is explained (not the most restrictive
// tier, against which a config written for another tier conflicts).
func TestExplainTakesTheConfigTier(t *testing.T) {
	e, _ := testEngine(t, os.Geteuid())
	x, err := e.Explain("", &policy.Config{Tier: "moderate"}, false)
	if err != nil || x.Tier.Name != "moderate" {
		t.Errorf("explain of a moderate config: %+v %v", x, err)
	}
	// Paired: no tier anywhere is the most restrictive.
	if x, err := e.Explain("", &policy.Config{}, false); err != nil || x.Tier.Name != strictest(e.cat) {
		t.Errorf("explain without a tier: %+v %v", x, err)
	}
}

// TestReadRegularBoundsSize: a file users hand sbxrun is read up to its
// bound and refused above it, with the caller's code.
func TestReadRegularBoundsSize(t *testing.T) {
	p := t.TempDir() + "/f"
	os.WriteFile(p, []byte("0123456789abcdef"), 0o644)
	if data, err := readRegular(p, 16, errcode.ConfigInvalid); err != nil || len(data) != 16 {
		t.Errorf("a file of exactly the bound: %d bytes, %v", len(data), err)
	}
	os.WriteFile(p, []byte("0123456789abcdefg"), 0o644)
	if _, err := readRegular(p, 16, errcode.ConfigInvalid); errcode.Of(err) != errcode.ConfigInvalid {
		t.Errorf("a file above the bound: %v, want %s", err, errcode.ConfigInvalid)
	}
}
