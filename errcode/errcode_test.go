package errcode

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestExitStatusOfEveryCode(t *testing.T) {
	want := map[Code]int{ProfileUnknown: 2, ConfigInvalid: 2, SpecInvalid: 2, NotFound: 2, StateConflict: 2,
		DowngradeBlocked: 3, PolicyConflict: 3, OverrideInvalid: 3, Unenforceable: 3, CompileError: 4,
		SpecNoncompliant: 5, AuditTampered: 6, StateUntrusted: 6, Internal: 1}
	if len(want) != len(All) {
		t.Fatalf("All has %d codes, the table %d", len(All), len(want))
	}
	for _, c := range All {
		if got := c.ExitStatus(); got != want[c] {
			t.Errorf("%s exits %d, want %d", c, got, want[c])
		}
	}
}

func TestErrorfWrapsAndStaysOneLine(t *testing.T) {
	err := Errorf(SpecInvalid, "reading spec: %w", fmt.Errorf("line1\nline2: %w", fs.ErrNotExist))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("wrapped error not reachable")
	}
	if err.Msg != "reading spec: line1 line2: file does not exist" {
		t.Errorf("msg %q", err.Msg)
	}
	wrapped := fmt.Errorf("outer: %w", err)
	if Of(wrapped) != SpecInvalid || Message(wrapped) != err.Msg {
		t.Errorf("Of/Message through wrapping: %s %q", Of(wrapped), Message(wrapped))
	}
	if Of(errors.New("x")) != Internal || Message(errors.New("a\nb")) != "a b" {
		t.Error("uncoded errors are internal, one line")
	}
}
