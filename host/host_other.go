//go:build !linux

package host

// On other systems there are no Linux rlimit types, cgroups or Landlock to
// probe; the OCI backend is only generated here, never run.
func hardRlimits() map[string]uint64           { return map[string]uint64{} }
func landlockABI() int                         { return 0 }
func cgroupSupport(rootless bool) (bool, bool) { return false, false }
