package main

import (
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/hooks"
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "OCI hook: read the container state on stdin and append a lifecycle record to the audit log",
		ArgsUsage: "STAGE (" + strings.Join(hooks.Stages, ", ") + ")",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errcode.Errorf(errcode.ConfigInvalid, "hook takes one stage")
			}
			return eng(c).Hook(c.Args().First(), os.Stdin)
		},
	}
}
