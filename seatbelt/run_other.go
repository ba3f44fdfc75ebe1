//go:build !darwin

package seatbelt

import "context"

// Run returns ErrUnsupported: seatbelt exists only on macOS. Profiles can
// still be generated and linted here.
func Run(ctx context.Context, p *Profile, cmd []string, stdio Stdio) error {
	return ErrUnsupported
}

// StartMonitor returns ErrUnsupported: the macOS log exists only there.
func StartMonitor(ctx context.Context, f Filter) (*Monitor, error) {
	return nil, ErrUnsupported
}
