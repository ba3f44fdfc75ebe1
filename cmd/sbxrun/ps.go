package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
)

func psCommand() *cli.Command {
	return &cli.Command{
		Name:      "ps",
		Usage:     "list a container's processes (table via ps(1), or json pids)",
		ArgsUsage: "CONTAINER-ID [PS-ARGS...]",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "table or json", Value: "table"}},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return errcode.Errorf(errcode.ConfigInvalid, "ps takes a container id")
			}
			pids, err := eng(c).Containers().Processes(c.Args().First())
			if err != nil {
				return err
			}
			switch c.String("format") {
			case "json":
				if pids == nil {
					pids = []int{}
				}
				return printJSON(pids)
			case "table":
				return psTable(pids, c.Args().Tail())
			}
			return errcode.Errorf(errcode.ConfigInvalid, "--format must be table or json")
		},
	}
}

// psTable runs ps(1) on the host and keeps the header and the container's
// rows, as runc does.
func psTable(pids []int, args []string) error {
	if len(args) == 0 {
		args = []string{"-ef"}
	}
	out, err := exec.Command("ps", args...).Output()
	if err != nil {
		return fmt.Errorf("running ps: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	col := -1
	for i, h := range strings.Fields(lines[0]) {
		if h == "PID" {
			col = i
		}
	}
	if col < 0 {
		return errcode.Errorf(errcode.ConfigInvalid, "ps output has no PID column")
	}
	in := map[int]bool{}
	for _, p := range pids {
		in[p] = true
	}
	var buf bytes.Buffer
	buf.WriteString(lines[0] + "\n")
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) > col {
			if p, err := strconv.Atoi(f[col]); err == nil && in[p] {
				buf.WriteString(l + "\n")
			}
		}
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}
