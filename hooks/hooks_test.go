package hooks

import (
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/errcode"
)

func TestReadStateAndRecord(t *testing.T) {
	st, err := ReadState(strings.NewReader(`{"ociVersion":"1.2.0","id":"c1","status":"stopped","pid":0,"bundle":"/b","annotations":{"dev.sbx.tier":"strict"}}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Record("poststop", st)
	if err != nil || rec.Target != "c1" || rec.Tier != "strict" || rec.Policy != "tier:strict" || rec.Operation != "poststop" {
		t.Errorf("record: %+v %v", rec, err)
	}
	if _, err := Record("afterlife", st); errcode.Of(err) != errcode.ConfigInvalid {
		t.Errorf("unknown stage: %v", err)
	}
	for _, bad := range []string{"", "{}", `{"ociVersion":"1","id":"x","extra":1}`, strings.Repeat("x", maxState+2)} {
		if _, err := ReadState(strings.NewReader(bad)); errcode.Of(err) != errcode.SpecInvalid {
			t.Errorf("ReadState(%.20q) = %v", bad, err)
		}
	}
}

func FuzzHookState(f *testing.F) {
	f.Add([]byte(`{"ociVersion":"1.2.0","id":"c1","status":"stopped","pid":0,"bundle":"/b"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ReadState(strings.NewReader(string(data)))
		if err != nil {
			if errcode.Of(err) != errcode.SpecInvalid {
				t.Fatalf("error without SANDBOX_SPEC_INVALID: %v", err)
			}
			return
		}
		if _, err := Record("poststop", st); err != nil {
			t.Fatal(err)
		}
	})
}
