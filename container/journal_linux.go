//go:build linux && cgo

package container

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"
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

func (r *Runtime) writeJournal(id string, cfg *configs.Config) error {
	if cfg.Cgroups == nil {
		return nil
	}
	m, err := manager.New(cfg.Cgroups)
	if err != nil {
		return fmt.Errorf("resolving cgroup paths: %w", err)
	}
	data, err := json.Marshal(journal{CgroupPaths: m.GetPaths()})
	if err != nil {
		return err
	}
	tmp := r.journalPath(id) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing create journal: %w", err)
	}
	return os.Rename(tmp, r.journalPath(id))
}

func (r *Runtime) dropJournal(id string) { _ = os.Remove(r.journalPath(id)) }

// recoverAborted cleans up after a create that never wrote its state:
// kills every process in the journal's cgroups and removes them.
func (r *Runtime) recoverAborted(id string) error {
	data, err := os.ReadFile(r.journalPath(id))
	if errors.Is(err, os.ErrNotExist) {
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
