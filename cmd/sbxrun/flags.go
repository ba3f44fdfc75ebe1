package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
	"github.com/sbxrun/sbxrun/profiles"
)

// selectFlags choose the tier of a compiling verb.
func selectFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tier", Usage: "sandbox tier: " + strings.Join(profiles.Builtin().Names(), ", ") + " (default: the config's tier, else the connector's binding, else default_tier in runtime.yaml, else the most restrictive)"},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML config that narrows the tier ('-' for stdin)"},
		&cli.StringFlag{Name: "connector", Usage: "agent/process id whose tier binding applies (no-downgrade)"},
		&cli.StringFlag{Name: "override-token", Usage: "override token authorizing a widening or a downgrade", EnvVars: []string{"SBXRUN_OVERRIDE_TOKEN"}},
	}
}

// hostFlags choose the Linux host a spec is compiled for.
func hostFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "rootless", Usage: "compile for an unprivileged caller (user namespace, no cgroups unless delegated)"},
		&cli.StringFlag{Name: "arch", Usage: "target architecture: amd64 or arm64 (default: this machine's)"},
		&cli.BoolFlag{Name: "reference-host", Usage: "compile for the documented reference host instead of this one (machine-independent output)"},
	}
}

// request builds the engine request from the select flags (and the host
// flags, where the verb has them). The config's override_token is used
// when no --override-token is given.
func request(c *cli.Context, op, target string, args []string) (engine.Request, error) {
	cfg, err := engine.ReadConfig(c.String("config"))
	if err != nil {
		return engine.Request{}, err
	}
	if len(args) > 0 {
		cfg.Process.Args = args
	}
	token := c.String("override-token")
	if token == "" {
		token = cfg.OverrideToken
	}
	return engine.Request{Operation: op, Target: target, Tier: c.String("tier"), From: engine.FromFlag,
		Connector: c.String("connector"), Config: cfg, OverrideToken: token,
		Facts: eng(c).Facts(engine.FactsOptions{Rootless: c.Bool("rootless"), Arch: c.String("arch"), Reference: c.Bool("reference-host")})}, nil
}
