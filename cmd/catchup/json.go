package main

import (
	"errors"

	"github.com/kafka-catchup/catchup/internal/version"
)

// jsonVersion is the version of the documents that --json prints (see
// docs/json.md). It changes only when a field is removed or changes
// meaning; adding a field keeps it.
const jsonVersion = 1

// jsonDoc is the one document a command run with --json prints, whatever
// it did: the schema version, the build, the command, one entry per
// pipeline (P: the command's own type) and, when the command failed, why.
// Every command shares it: add fields to the P types, not here.
type jsonDoc[P any] struct {
	Version   int          `json:"version"` // jsonVersion
	Catchup   version.Info `json:"catchup"` // the build that printed it
	Command   string       `json:"command"` // run, plan, status, verify, backfill, translate, reset, mirrormaker, mirrormaker2
	Pipelines []P          `json:"pipelines"`
	// Error is the error the command exited with, which it also wrote to
	// stderr; absent when it succeeded or only left work undone (exit 1
	// with every pipeline's outcome inside).
	Error string `json:"error,omitempty"`
}

// addJSON adds one pipeline's entry to the invocation's document.
func (a *app) addJSON(v any) { a.jsonPipelines = append(a.jsonPipelines, v) }

// jsonDocument returns the document of command, which ended with err.
func (a *app) jsonDocument(command string, err error) jsonDoc[any] {
	doc := jsonDoc[any]{Version: jsonVersion, Catchup: version.Get(), Command: command, Pipelines: a.jsonPipelines}
	if doc.Pipelines == nil {
		doc.Pipelines = []any{}
	}
	if err != nil && !errors.Is(err, errNotDone) {
		doc.Error = err.Error()
	}
	return doc
}
