package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/hooks"
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "OCI hook: read the container state on stdin and append a lifecycle record to the audit log",
		ArgsUsage: "STAGE (prestart, createRuntime, createContainer, startContainer, poststart, poststop)",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errcode.Errorf(errcode.ConfigInvalid, "hook takes one stage")
			}
			st, err := hooks.ReadState(os.Stdin)
			if err != nil {
				return err
			}
			rec, err := hooks.Record(c.Args().First(), st)
			if err != nil {
				return err
			}
			_, err = auditLog(c).Append(rec)
			return err
		},
	}
}
