package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:  "explain",
		Usage: "describe what a tier allows on this host, and why",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tier", Usage: "tier to explain", Value: "strict"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML config that narrows the tier"},
			&cli.BoolFlag{Name: "rootless", Usage: "explain the rootless form"},
		},
		Action: runExplain,
	}
}

func runExplain(c *cli.Context) error {
	t, ok := profiles.Lookup(c.String("tier"))
	if !ok {
		return errcode.Errorf(errcode.ProfileUnknown, "unknown tier %q (one of %s)", c.String("tier"), strings.Join(profiles.Builtin().Names(), ", "))
	}
	cfg, err := readConfig(c.String("config"))
	if err != nil {
		return err
	}
	g, err := policy.Compile(t.Name, cfg, host.Probe(host.Options{Rootless: c.Bool("rootless")}), nil)
	if err != nil {
		return err
	}
	out := os.Stdout
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
	fmt.Fprintf(out, "\nRuns as %d:%d (%s)\nLinux capabilities: %s\nUser namespace: %v\nNetwork: %s\n",
		g.Identity.UID, g.Identity.GID, t.RunAs.Why, caps, g.Identity.UserNamespace, g.Net.Mode)
	if g.Limits.Cgroups {
		fmt.Fprintf(out, "Limits: memory %d bytes, cpu %d/%d us, pids %d, /tmp %d bytes\n",
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
	return nil
}
