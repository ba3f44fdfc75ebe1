package policy_test

import (
	"testing"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// FuzzConfig feeds arbitrary bytes through the config decoder and the
// compiler: neither may panic, and every failure must carry a stable code.
func FuzzConfig(f *testing.F) {
	for _, s := range []string{"", "tier: strict", "capabilities: {network_access: deny}",
		"fs: {read: [{source: /srv}], write: [{source: /srv/x}]}", "limits: {memory: 1Gi, cpus: \"0.5\"}",
		"env: {set: {A: b}, pass: [\"L*\"]}", "network: {allow: [\"a.b:1\"]}", "syscalls: {deny: [read]}"} {
		f.Add([]byte(s))
	}
	fc := facts()
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := policy.ParseConfig(data)
		if err != nil {
			if errcode.Of(err) != errcode.ConfigInvalid {
				t.Fatalf("ParseConfig error without SANDBOX_CONFIG_INVALID: %v", err)
			}
			return
		}
		for _, tier := range []string{"strict", "permissive"} {
			_, err := policy.Compile(tier, cfg, fc, nil)
			if err != nil && errcode.Of(err) == errcode.Internal {
				t.Fatalf("Compile error without a stable code: %v", err)
			}
		}
	})
}
