package main

import (
	"encoding/json"
	"io"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
)

func updateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "lower or raise a container's memory, cpu and pids limits (within its tier)",
		ArgsUsage: "CONTAINER-ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: "OCI linux.resources JSON file ('-' for stdin)"},
			&cli.Int64Flag{Name: "memory", Usage: "memory limit in bytes"},
			&cli.Int64Flag{Name: "memory-swap", Usage: "memory+swap limit in bytes (-1: unlimited)"},
			&cli.Int64Flag{Name: "memory-reservation", Usage: "memory soft limit in bytes"},
			&cli.Uint64Flag{Name: "cpu-share", Usage: "CPU shares (relative weight)"},
			&cli.Int64Flag{Name: "cpu-quota", Usage: "CPU CFS quota in microseconds"},
			&cli.Uint64Flag{Name: "cpu-period", Usage: "CPU CFS period in microseconds"},
			&cli.StringFlag{Name: "cpuset-cpus", Usage: "CPUs the container may use (e.g. 0-1)"},
			&cli.StringFlag{Name: "cpuset-mems", Usage: "memory nodes the container may use"},
			&cli.UintFlag{Name: "blkio-weight", Usage: "block IO weight (10-1000)"},
			&cli.Int64Flag{Name: "pids-limit", Usage: "maximum number of processes"},
		},
		Action: runUpdate,
	}
}

func runUpdate(c *cli.Context) error {
	id, err := containerID(c)
	if err != nil {
		return err
	}
	res := &specs.LinuxResources{}
	if f := c.String("resources"); f != "" {
		var data []byte
		if f == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return errcode.Errorf(errcode.ConfigInvalid, "reading resources: %v", err)
		}
		if err := json.Unmarshal(data, res); err != nil {
			return errcode.Errorf(errcode.ConfigInvalid, "parsing resources: %v", err)
		}
	}
	if err := resourceFlags(c, res); err != nil {
		return err
	}
	// A sandboxed container may not be given more than its tier allows.
	st, err := runtimeOf(c).State(id)
	if err != nil {
		return err
	}
	g, err := containerGrants(st)
	if err != nil {
		return err
	}
	if g != nil && g.Limits.Cgroups {
		over := func(what string, got, max int64) error {
			return errcode.Errorf(errcode.PolicyConflict, "%s %d is above tier %s's %d", what, got, g.Tier, max)
		}
		if res.Memory != nil && res.Memory.Limit != nil && (*res.Memory.Limit <= 0 || *res.Memory.Limit > g.Limits.MemoryBytes) {
			return over("memory", *res.Memory.Limit, g.Limits.MemoryBytes)
		}
		if res.Pids != nil && res.Pids.Limit != nil && (*res.Pids.Limit <= 0 || *res.Pids.Limit > g.Limits.Pids) {
			return over("pids", *res.Pids.Limit, g.Limits.Pids)
		}
		if res.CPU != nil && res.CPU.Quota != nil {
			// Compare shares of a CPU: quota/period against the tier's.
			period := g.Limits.CPUPeriod
			if res.CPU.Period != nil {
				period = *res.CPU.Period
			}
			q := *res.CPU.Quota
			if q <= 0 || period == 0 || q*int64(g.Limits.CPUPeriod) > g.Limits.CPUQuota*int64(period) {
				return errcode.Errorf(errcode.PolicyConflict, "cpu quota %d/%d is above tier %s's %d/%d", q, period, g.Tier, g.Limits.CPUQuota, g.Limits.CPUPeriod)
			}
		}
	}
	return runtimeOf(c).Update(id, res)
}

// resourceFlags sets the fields named by update's flags, over --resources.
func resourceFlags(c *cli.Context, res *specs.LinuxResources) error {
	mem := func() *specs.LinuxMemory {
		if res.Memory == nil {
			res.Memory = &specs.LinuxMemory{}
		}
		return res.Memory
	}
	cpu := func() *specs.LinuxCPU {
		if res.CPU == nil {
			res.CPU = &specs.LinuxCPU{}
		}
		return res.CPU
	}
	i64 := func(name string) *int64 { v := c.Int64(name); return &v }
	u64 := func(name string) *uint64 { v := c.Uint64(name); return &v }
	if c.IsSet("memory") {
		mem().Limit = i64("memory")
	}
	if c.IsSet("memory-swap") {
		mem().Swap = i64("memory-swap")
	}
	if c.IsSet("memory-reservation") {
		mem().Reservation = i64("memory-reservation")
	}
	if c.IsSet("cpu-share") {
		cpu().Shares = u64("cpu-share")
	}
	if c.IsSet("cpu-quota") {
		cpu().Quota = i64("cpu-quota")
	}
	if c.IsSet("cpu-period") {
		cpu().Period = u64("cpu-period")
	}
	if c.IsSet("cpuset-cpus") {
		cpu().Cpus = c.String("cpuset-cpus")
	}
	if c.IsSet("cpuset-mems") {
		cpu().Mems = c.String("cpuset-mems")
	}
	if c.IsSet("blkio-weight") {
		if c.Uint("blkio-weight") > 1000 {
			return errcode.Errorf(errcode.ConfigInvalid, "--blkio-weight %d is above 1000", c.Uint("blkio-weight"))
		}
		w := uint16(c.Uint("blkio-weight"))
		if res.BlockIO == nil {
			res.BlockIO = &specs.LinuxBlockIO{}
		}
		res.BlockIO.Weight = &w
	}
	if c.IsSet("pids-limit") {
		res.Pids = &specs.LinuxPids{Limit: i64("pids-limit")}
	}
	return nil
}
