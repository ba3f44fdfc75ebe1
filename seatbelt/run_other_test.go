//go:build !darwin

package seatbelt

import (
	"context"
	"errors"
	"testing"
)

func TestRunUnsupported(t *testing.T) {
	p := generate(t, "strict", nil, withOpts(PresetNone, nil))
	if err := Run(context.Background(), p, nil, Stdio{}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Run: %v", err)
	}
	if _, err := StartMonitor(context.Background(), Filter{Tag: "x"}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("StartMonitor: %v", err)
	}
}
