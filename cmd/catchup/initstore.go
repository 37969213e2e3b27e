package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

func (a *app) initStoreCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init-store",
		Short: "Create the checkpoint store the configuration names (idempotent)",
		Long: `init-store creates the DynamoDB table (key schema pipeline/partition,
on-demand billing) or the local directory named by the configuration's
store key. Running it again changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			loc, err := f.StoreLocation()
			if err != nil {
				return usageError{err}
			}
			switch loc.Scheme {
			case "file":
				if err := os.MkdirAll(loc.Path, 0o755); err != nil {
					return err
				}
			case "dynamodb":
				client, err := pipeline.DynamoDB(cmd.Context())
				if err != nil {
					return err
				}
				if err := dynamostore.CreateTable(cmd.Context(), client, loc.Path); err != nil {
					return err
				}
			}
			fmt.Fprintf(a.out, "store %s is ready\n", f.Store)
			return nil
		},
	}
}
