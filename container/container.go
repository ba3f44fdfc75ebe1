// Package container runs OCI specs as real containers. It is the only
// package that imports libcontainer (runc's engine): create, start, run,
// exec, signal, pause, resume, delete, state, processes and stats, with
// state kept under the runtime root. It knows nothing of tiers; callers pass
// it a spec that enforce has already made compliant.
package container

import (
	"errors"
	"io"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ErrNotExist is returned for an unknown container id.
var ErrNotExist = errors.New("container does not exist")

// Runtime is one state root.
type Runtime struct {
	// Root holds one directory of state per container.
	Root string
}

// State is what `state` and `list` print: runc's format, which podman and
// containerd parse.
type State struct {
	Version     string            `json:"ociVersion"`
	ID          string            `json:"id"`
	Pid         int               `json:"pid"`
	Status      string            `json:"status"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Owner       string            `json:"owner"`
}

// IO is the stdio of a foreground process.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// CreateOptions describe a new container.
type CreateOptions struct {
	ID     string
	Bundle string
	Spec   *specs.Spec
	// PidFile receives the init pid, written atomically.
	PidFile string
	// ConsoleSocket is a unix socket that receives the pty master when
	// the process has a terminal and the runtime detaches.
	ConsoleSocket string
	NoPivot       bool
	NoNewKeyring  bool
	// PreserveFDs passes fds 3..3+N-1 of the caller to the container.
	PreserveFDs int
	// InitialOnly enforces process_exec=deny: only the process's program
	// (and its interpreter) may ever be executed (Landlock).
	InitialOnly bool
	// Attachments are files kept with the container's state for as long as
	// it exists (e.g. the policy it was created under), by name.
	Attachments map[string][]byte
}

// ExecOptions describe a process started in a running container.
type ExecOptions struct {
	Process       *specs.Process
	Detach        bool
	PidFile       string
	ConsoleSocket string
	PreserveFDs   int
	InitialOnly   bool
}

// Stats are a container's resource usage.
type Stats struct {
	CPUUsageNanos uint64 `json:"cpu_usage_ns"`
	MemoryUsage   uint64 `json:"memory_usage_bytes"`
	MemoryLimit   uint64 `json:"memory_limit_bytes"`
	PidsCurrent   uint64 `json:"pids_current"`
	PidsLimit     uint64 `json:"pids_limit"`
}
