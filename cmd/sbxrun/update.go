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
			&cli.Int64Flag{Name: "cpu-quota", Usage: "CPU CFS quota in microseconds"},
			&cli.Uint64Flag{Name: "cpu-period", Usage: "CPU CFS period in microseconds"},
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
	if c.IsSet("memory") {
		v := c.Int64("memory")
		res.Memory = &specs.LinuxMemory{Limit: &v}
	}
	if c.IsSet("cpu-quota") || c.IsSet("cpu-period") {
		res.CPU = &specs.LinuxCPU{}
		if c.IsSet("cpu-quota") {
			v := c.Int64("cpu-quota")
			res.CPU.Quota = &v
		}
		if c.IsSet("cpu-period") {
			v := c.Uint64("cpu-period")
			res.CPU.Period = &v
		}
	}
	if c.IsSet("pids-limit") {
		v := c.Int64("pids-limit")
		res.Pids = &specs.LinuxPids{Limit: &v}
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
