package enforce

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// TestEnforceProcessRefusesRaisedPriority: an exec'd process gets no
// final lint, so EnforceProcess itself must refuse what libcontainer would
// apply with privileges the tier does not grant: a negative nice value and
// the realtime I/O class. Lowering the priority is kept.
func TestEnforceProcessRefusesRaisedPriority(t *testing.T) {
	g := grants(t, "strict")
	for _, tc := range []struct {
		name    string
		bad, ok func(*specs.Process)
	}{
		{"negative nice",
			func(p *specs.Process) { p.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Nice: -10} },
			func(p *specs.Process) { p.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Nice: 10} }},
		{"realtime I/O class",
			func(p *specs.Process) { p.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_RT} },
			func(p *specs.Process) { p.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_IDLE} }},
	} {
		bad := engineSpec().Process
		tc.bad(bad)
		if _, _, err := EnforceProcess(bad, g); err == nil {
			t.Errorf("%s: EnforceProcess accepted it", tc.name)
		}
		ok := engineSpec().Process
		tc.ok(ok)
		if _, _, err := EnforceProcess(ok, g); err != nil {
			t.Errorf("%s: paired harmless value refused: %v", tc.name, err)
		}
	}
}
