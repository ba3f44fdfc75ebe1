//go:build !linux || !cgo

package host

import (
	"fmt"

	"github.com/sbxrun/sbxrun/policy"
)

// Syscalls returns a resolver that refuses every name: without libseccomp
// (no cgo, or not Linux) names cannot be validated, and an unvalidated name
// could be a silent hole in a filter, so OCI compilation fails closed.
func Syscalls() policy.SyscallResolver { return unavailable{} }

type unavailable struct{}

func (unavailable) Known(name, arch string) (bool, error) {
	return false, fmt.Errorf("this build has no libseccomp (needs linux and cgo)")
}
