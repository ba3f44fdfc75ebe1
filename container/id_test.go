package container

import (
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/errcode"
)

func TestValidateID(t *testing.T) {
	valid := []string{"a", "A-b_c.d+e", "0", "...a", "a..b", strings.Repeat("x", MaxIDLength)}
	for _, id := range valid {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v, want nil", id, err)
		}
	}
	invalid := []string{"", ".", "..", "a/b", "../x", "/abs", "a b", "a\x00b", "tab\t", "ünï", "a:b", "a*b",
		strings.Repeat("x", MaxIDLength+1)}
	for _, id := range invalid {
		err := ValidateID(id)
		if errcode.Of(err) != errcode.ConfigInvalid {
			t.Errorf("ValidateID(%q) = %v, want %s", id, err, errcode.ConfigInvalid)
		}
		// One line, and an over-long id is not echoed back whole.
		if msg := errcode.Message(err); strings.Contains(msg, "\n") || len(msg) > 200 {
			t.Errorf("ValidateID(%q): message %q", id, msg)
		}
	}
}

func TestNotExistError(t *testing.T) {
	err := notExist("c1")
	if errcode.Of(err) != errcode.NotFound || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "c1") {
		t.Errorf("notExist: %v (%s)", err, errcode.Of(err))
	}
}
