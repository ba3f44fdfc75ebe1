package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/profiles"
)

func featuresCommand() *cli.Command {
	return &cli.Command{
		Name:  "features",
		Usage: "print the OCI features JSON: what this build and host support",
		Action: func(c *cli.Context) error {
			feat := container.Features()
			facts := host.Probe(host.Options{Rootless: os.Geteuid() != 0})
			feat.Annotations["dev.sbx.version"] = version
			feat.Annotations["dev.sbx.tiers"] = strings.Join(profiles.Builtin().Names(), ",")
			feat.Annotations["dev.sbx.landlock.abi"] = strconv.Itoa(facts.LandlockABI)
			feat.Annotations["dev.sbx.cgroup-limits"] = strconv.FormatBool(facts.CgroupLimits)
			feat.Annotations["dev.sbx.rootless"] = strconv.FormatBool(facts.Rootless)
			return printJSON(feat)
		},
	}
}
