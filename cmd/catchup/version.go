package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/version"
)

// versionCmd prints the build: version, commit, build date, Go version.
func (a *app) versionCmd() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print catchup's version, commit, build date and Go version",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			in := version.Get()
			if jsonOut {
				b, err := json.Marshal(in)
				if err != nil {
					return fmt.Errorf("encode version: %w", err)
				}
				_, err = fmt.Fprintf(a.out, "%s\n", b)
				return err
			}
			_, err := fmt.Fprintln(a.out, in.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the build as one JSON object")
	return cmd
}
