//go:build !linux || !cgo

package container

import (
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
)

// errUnsupported: containers need Linux namespaces and libcontainer's cgo
// nsenter; elsewhere (or in a build without cgo) sbxrun generates and lints
// specs only, and says so rather than pretending to run anything.
var errUnsupported = errcode.Errorf(errcode.Unenforceable, "running containers needs a Linux build with cgo")

func (r *Runtime) Create(CreateOptions) error                { return errUnsupported }
func (r *Runtime) Run(CreateOptions, bool, IO) (int, error)  { return -1, errUnsupported }
func (r *Runtime) Start(string) error                        { return errUnsupported }
func (r *Runtime) Exec(string, ExecOptions, IO) (int, error) { return -1, errUnsupported }
func (r *Runtime) Signal(string, os.Signal, bool) error      { return errUnsupported }
func (r *Runtime) Delete(string, bool) error                 { return errUnsupported }
func (r *Runtime) State(string) (*State, error)              { return nil, errUnsupported }
func (r *Runtime) List() ([]State, error)                    { return nil, errUnsupported }
func (r *Runtime) Processes(string) ([]int, error)           { return nil, errUnsupported }
func (r *Runtime) Pause(string) error                        { return errUnsupported }
func (r *Runtime) Resume(string) error                       { return errUnsupported }
func (r *Runtime) Events(string, EventOptions, func(*Event) error) error {
	return errUnsupported
}
func (r *Runtime) Update(string, *specs.LinuxResources) error   { return errUnsupported }
func (r *Runtime) Limits(string) (*specs.LinuxResources, error) { return nil, errUnsupported }

// Event has the JSON shape of runc's types.Event, which the Linux build
// uses (runc's types package does not build elsewhere).
type Event struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Data any    `json:"data,omitempty"`
}

// Compat has nothing to adjust where no container runs.
func Compat(*specs.Spec) ([]string, error) { return nil, nil }
