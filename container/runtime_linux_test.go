//go:build linux && cgo

package container

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/sbxrun/sbxrun/errcode"
)

// idCalls calls every Runtime method that takes a container id.
var idCalls = map[string]func(r *Runtime, id string) error{
	"Create": func(r *Runtime, id string) error {
		return r.Create(CreateOptions{ID: id, Bundle: "/nonexistent", Spec: &specs.Spec{Process: &specs.Process{Args: []string{"true"}, Cwd: "/"}}})
	},
	"Run": func(r *Runtime, id string) error {
		_, err := r.Run(CreateOptions{ID: id, Bundle: "/nonexistent", Spec: &specs.Spec{Process: &specs.Process{Args: []string{"true"}, Cwd: "/"}}}, true, IO{})
		return err
	},
	"Start": func(r *Runtime, id string) error { return r.Start(id) },
	"Exec": func(r *Runtime, id string) error {
		_, err := r.Exec(id, ExecOptions{Process: &specs.Process{Args: []string{"true"}, Cwd: "/"}, Detach: true}, IO{})
		return err
	},
	"Signal":    func(r *Runtime, id string) error { return r.Signal(id, unix.SIGTERM, false) },
	"Delete":    func(r *Runtime, id string) error { return r.Delete(id, false) },
	"State":     func(r *Runtime, id string) error { _, err := r.State(id); return err },
	"Processes": func(r *Runtime, id string) error { _, err := r.Processes(id); return err },
	"Pause":     func(r *Runtime, id string) error { return r.Pause(id) },
	"Resume":    func(r *Runtime, id string) error { return r.Resume(id) },
	"Stats":     func(r *Runtime, id string) error { _, err := r.Stats(id); return err },
	"Update": func(r *Runtime, id string) error {
		return r.Update(id, &specs.LinuxResources{})
	},
	"Attachment": func(r *Runtime, id string) error { _, err := r.Attachment(id, "grants.json"); return err },
	"Limits":     func(r *Runtime, id string) error { _, err := r.Limits(id); return err },
	"Events": func(r *Runtime, id string) error {
		return r.Events(id, EventOptions{StatsOnly: true}, func(*Event) error { return nil })
	},
}

// TestEveryMethodChecksTheID: each method refuses a malformed id with
// ConfigInvalid before touching the state root, and reports a valid but
// unknown id as NotFound ("does not exist"). The table must name every
// exported method but List, so a new method cannot skip the check.
func TestEveryMethodChecksTheID(t *testing.T) {
	var methods []string
	rt := reflect.TypeOf(&Runtime{})
	for i := 0; i < rt.NumMethod(); i++ {
		if name := rt.Method(i).Name; name != "List" {
			methods = append(methods, name)
		}
	}
	var covered []string
	for name := range idCalls {
		covered = append(covered, name)
	}
	sort.Strings(covered)
	if !reflect.DeepEqual(methods, covered) {
		t.Fatalf("Runtime methods %v, id checks cover %v", methods, covered)
	}
	root := filepath.Join(t.TempDir(), "root")
	r := &Runtime{Root: root}
	for name, call := range idCalls {
		for _, id := range []string{"", "..", "a/b", "../../etc", strings.Repeat("x", MaxIDLength+1)} {
			if err := call(r, id); errcode.Of(err) != errcode.ConfigInvalid {
				t.Errorf("%s(%q) = %v, want %s", name, id, err, errcode.ConfigInvalid)
			}
		}
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("a malformed id touched the state root: %v", err)
	}
	if err := os.MkdirAll(root, 0o711); err != nil {
		t.Fatal(err)
	}
	for name, call := range idCalls {
		if name == "Create" || name == "Run" {
			continue // creating an unknown id is the point of these
		}
		err := call(r, "nosuch")
		if errcode.Of(err) != errcode.NotFound || !strings.Contains(err.Error(), "does not exist") || !errors.Is(err, ErrNotExist) {
			t.Errorf("%s(unknown) = %v, want %s ... does not exist", name, err, errcode.NotFound)
		}
	}
	if err := r.Delete("nosuch", true); err != nil {
		t.Errorf("Delete --force of an unknown id: %v", err)
	}
}
