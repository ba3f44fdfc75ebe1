// Package container runs OCI specs as real containers. It is the only
// package that imports libcontainer (runc's engine): create, start, run,
// exec, signal, pause, resume, delete, state, processes and stats, with
// state kept under the runtime root. It knows nothing of tiers; callers pass
// it a spec that enforce has already made compliant.
package container

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
)

// ErrNotExist is wrapped by the error for an unknown container id.
// podman and containerd recognise a missing container by the text "does
// not exist" in the runtime's message.
var ErrNotExist = errors.New("container does not exist")

// MaxIDLength bounds a container id: the id is a directory name under the
// state root, part of the create journal's name (".create-ID.json" and its
// temporary sibling) and the last element of its cgroup paths, and each of
// those must stay below NAME_MAX (255 bytes).
const MaxIDLength = 200

var idPattern = regexp.MustCompile(`^[\w+.-]+$`)

// ValidateID checks a container id: letters, digits, '_', '+', '-' and
// '.', not "." or "..", at most MaxIDLength bytes (the rule runc and
// libcontainer apply, plus the length bound). Every Runtime method calls
// it before touching any state.
func ValidateID(id string) error {
	if len(id) > MaxIDLength {
		return errcode.Errorf(errcode.ConfigInvalid, "container id is %d bytes long; at most %d are allowed", len(id), MaxIDLength)
	}
	if !idPattern.MatchString(id) || id == "." || id == ".." {
		return errcode.Errorf(errcode.ConfigInvalid, "invalid container id %q: use letters, digits, '_', '+', '-' and '.' (not \".\" or \"..\")", id)
	}
	return nil
}

// notExist is the error for a valid id that names no container.
func notExist(id string) error {
	return &errcode.Error{Code: errcode.NotFound, Msg: fmt.Sprintf("container %s does not exist", id), Err: ErrNotExist}
}

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
	// OwnCgroup refuses a spec whose cgroups already exist: a sandbox must
	// not join (and set limits on, and kill --all in) a cgroup it shares.
	OwnCgroup bool
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

// EventOptions select what Events reports.
type EventOptions struct {
	// StatsOnly reports one stats event and returns.
	StatsOnly bool
	// Interval is the time between stats events otherwise.
	Interval time.Duration
}
