package main

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
	"github.com/sbxrun/sbxrun/errcode"
)

func updateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "change a running container's resource limits (under a tier, only lower them)",
		ArgsUsage: "CONTAINER-ID",
		Description: "Every field of --resources (OCI linux.resources JSON) is applied or the update is\n" +
			"refused naming it; the flags override the file's values. Under a tier, a ceiling the\n" +
			"tier sets (memory, memory+swap, cpu quota, pids) may only be lowered.",
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
		Action: func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			res := &specs.LinuxResources{}
			if f := c.String("resources"); f != "" {
				if res, err = engine.ReadResources(f); err != nil {
					return err
				}
			}
			if err := resourceFlags(c, res); err != nil {
				return err
			}
			return eng(c).Update(id, res)
		},
	}
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
