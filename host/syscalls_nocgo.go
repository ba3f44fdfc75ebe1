//go:build !linux || !cgo

package host

import (
	"fmt"
	"sort"

	"github.com/sbxrun/sbxrun/policy"
)

// Syscalls returns a resolver over the table generated from libseccomp
// (syscalls_table.go): builds without libseccomp — darwin, or cgo off —
// still validate every name, against the same data libseccomp has.
func Syscalls() policy.SyscallResolver { return tableResolver{} }

type tableResolver struct{}

func (tableResolver) Known(name, arch string) (bool, error) {
	names, ok := syscallTable[arch]
	if !ok {
		return false, fmt.Errorf("no syscall table for %q", arch)
	}
	i := sort.SearchStrings(names, name)
	return i < len(names) && names[i] == name, nil
}
