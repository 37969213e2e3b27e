package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// docsCmd writes what a release archive carries besides the binary: a man
// page per command and the shell completion scripts, made from the command
// tree itself so that they cannot drift from it. Hidden: it is for
// packaging (make release), not for users.
func (a *app) docsCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "docs",
		Short:  "write the man pages and the shell completions into a directory",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeDocs(cmd.Root(), dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "dist-docs", "directory to write man/man1/*.1 and completions/catchup.{bash,zsh,fish} into")
	return cmd
}

// writeDocs writes root's man pages into dir/man/man1 and its completion
// scripts into dir/completions.
func writeDocs(root *cobra.Command, dir string) error {
	man := filepath.Join(dir, "man", "man1")
	comp := filepath.Join(dir, "completions")
	for _, d := range []string{man, comp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	root.DisableAutoGenTag = true // the same sources give the same pages
	if err := doc.GenManTree(root, &doc.GenManHeader{Title: "CATCHUP", Section: "1", Source: "catchup"}, man); err != nil {
		return fmt.Errorf("man pages into %s: %w", man, err)
	}
	for shell, gen := range map[string]func(string) error{
		"bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
		"zsh":  root.GenZshCompletionFile,
		"fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
	} {
		if err := gen(filepath.Join(comp, "catchup."+shell)); err != nil {
			return fmt.Errorf("%s completion: %w", shell, err)
		}
	}
	return nil
}
