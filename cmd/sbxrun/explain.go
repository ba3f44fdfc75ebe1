package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
	"github.com/sbxrun/sbxrun/profiles"
)

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:  "explain",
		Usage: "describe what a tier allows on this host, as this caller would run it, and why",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tier", Usage: "tier to explain (default: the most restrictive)"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML config that narrows the tier"},
			&cli.BoolFlag{Name: "rootless", Usage: "explain the rootless form (implied when not run as root)"},
		},
		Action: func(c *cli.Context) error {
			cfg, err := engine.ReadConfig(c.String("config"))
			if err != nil {
				return err
			}
			x, err := eng(c).Explain(c.String("tier"), cfg, c.Bool("rootless"))
			if err != nil {
				return err
			}
			printExplanation(x)
			return nil
		},
	}
}

func printExplanation(x *engine.Explanation) {
	t, g := x.Tier, x.Grants
	out := stdout
	fmt.Fprintf(out, "Tier %s (level %d): %s\n\n", t.Name, t.Level, t.Description)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CAPABILITY\tACCESS\tWHY")
	for _, capName := range profiles.Capabilities {
		fmt.Fprintf(w, "%s\t%s\t%s\n", capName, g.Access.Get(capName), t.Capabilities[capName].Why)
	}
	w.Flush()
	caps := "none"
	if len(g.Identity.Capabilities) > 0 {
		caps = strings.Join(g.Identity.Capabilities, " ")
	}
	fmt.Fprintf(out, "\nRuns as %d:%d in the sandbox", g.Identity.UID, g.Identity.GID)
	switch {
	case g.Rootless:
		fmt.Fprintf(out, " = your own uid %d:%d on the host (rootless: a single-id user namespace)\n", x.HostUID, x.HostGID)
	case g.Identity.UserNamespace:
		fmt.Fprintf(out, " = unused host id %d:%d (user namespace)\n", x.HostUID, x.HostGID)
	default:
		fmt.Fprintf(out, " = the same id on the host (%s)\n", t.RunAs.Why)
	}
	fmt.Fprintf(out, "Linux capabilities: %s\nUser namespace: %v\nNetwork: %s\n", caps, g.Identity.UserNamespace, g.Net.Mode)
	if g.Limits.Cgroups {
		fmt.Fprintf(out, "Limits: memory %d bytes, cpu %d/%d us, pids %d, /tmp %d bytes\n",
			g.Limits.MemoryBytes, g.Limits.CPUQuota, g.Limits.CPUPeriod, g.Limits.Pids, g.Limits.TmpBytes)
	} else {
		fmt.Fprintf(out, "Limits: NOT ENFORCED for memory (%d bytes) and cpu (%d/%d us): no cgroup delegation for this caller; pids %d as RLIMIT_NPROC; /tmp %d bytes\n",
			g.Limits.MemoryBytes, g.Limits.CPUQuota, g.Limits.CPUPeriod, g.Limits.Pids, g.Limits.TmpBytes)
	}
	for _, r := range g.Limits.Rlimits {
		fmt.Fprintf(out, "Rlimit: %s %d/%d\n", r.Type, r.Soft, r.Hard)
	}
	for _, set := range t.MaskedPaths {
		fmt.Fprintf(out, "Masked for this tier: %s\n  (%s)\n", strings.Join(set.Paths, " "), set.Why)
	}
	fmt.Fprintf(out, "\nSyscalls (unlisted ones fail with errno %d):\n", g.Syscalls.DefaultErrno)
	for _, grp := range g.Syscalls.Groups {
		fmt.Fprintf(out, "  %s: %s\n", grp, grp.Why)
		for _, cond := range grp.Conditions() {
			fmt.Fprintf(out, "      %s\n", cond)
		}
	}
	for _, n := range g.Notes {
		fmt.Fprintf(out, "Note: %s\n", n)
	}
	for _, u := range g.Unenforced {
		fmt.Fprintf(out, "Not enforced by the spec alone: %s\n", u)
	}
}
