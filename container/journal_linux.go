//go:build linux && cgo

package container

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/sbxrun/sbxrun/errcode"
)

// The create journal records, before libcontainer creates anything, where
// a container's cgroups will be. If sbxrun is killed mid-create there is no
// state.json yet, so libcontainer cannot load (or destroy) the container;
// delete --force then finds the cgroups here, kills what runs in them and
// removes them, so a crash never leaves a cgroup or process behind.
type journal struct {
	CgroupPaths map[string]string `json:"cgroup_paths"`
}

func (r *Runtime) journalPath(id string) string {
	return filepath.Join(r.Root, ".create-"+id+".json")
}

// writeJournal records cfg's cgroup paths for id. The journal is created
// exclusively and lives as long as the container (destroy removes it), so
// it is also the id's lock: a second create of the id fails here with
// StateConflict before it touches anything, and never removes the first
// one's journal. It is written to a temporary file and linked into place,
// so a reader never sees a partial journal.
func (r *Runtime) writeJournal(id string, cfg *configs.Config) (map[string]string, error) {
	var j journal
	if cfg.Cgroups != nil {
		m, err := manager.New(cfg.Cgroups)
		if err != nil {
			return nil, fmt.Errorf("resolving cgroup paths: %w", err)
		}
		j.CgroupPaths = m.GetPaths()
	}
	data, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(r.Root, journalTempPrefix(id))
	if err != nil {
		return nil, fmt.Errorf("writing create journal: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing create journal: %w", err)
	}
	if err := os.Link(tmp.Name(), r.journalPath(id)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, errcode.Errorf(errcode.StateConflict, "container %s already exists", id)
		}
		return nil, fmt.Errorf("writing create journal: %w", err)
	}
	return j.CgroupPaths, nil
}

func journalTempPrefix(id string) string { return ".create-" + id + ".json.tmp-" }

// dropJournal removes id's journal and any temporary file a killed
// create left (ids contain no glob metacharacters).
func (r *Runtime) dropJournal(id string) {
	_ = os.Remove(r.journalPath(id))
	tmps, _ := filepath.Glob(filepath.Join(r.Root, journalTempPrefix(id)+"*"))
	for _, t := range tmps {
		_ = os.Remove(t)
	}
}

// recoverAborted cleans up after a create that never wrote its state:
// kills every process in the journal's cgroups and removes them.
func (r *Runtime) recoverAborted(id string) error {
	data, err := os.ReadFile(r.journalPath(id))
	if errors.Is(err, os.ErrNotExist) {
		r.dropJournal(id)
		return nil
	}
	if err != nil {
		return err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("create journal of %s is corrupt: %w", id, err)
	}
	var errs []error
	for _, p := range j.CgroupPaths {
		if err := killCgroup(p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.dropJournal(id)
	return nil
}

func killCgroup(path string) error {
	for i := 0; i < 100; i++ {
		data, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		pids := strings.Fields(string(data))
		if len(pids) == 0 {
			if err := unix.Rmdir(path); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("removing cgroup %s: %w", path, err)
			}
			return nil
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("processes in cgroup %s survived SIGKILL", path)
}
