package replicate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TopicACLLister is a cluster that lists its topic ACLs. With
// Options.SyncACLs the Source's are read and the Target's compared with
// them. kafkago.Source and kafkago.Target implement it.
type TopicACLLister interface {
	// TopicACLs returns every ACL on a topic resource, literal and
	// prefixed.
	TopicACLs(ctx context.Context) ([]catchup.ACL, error)
}

// TopicACLCreator is a Target that lists and creates topic ACLs; with
// Options.SyncACLs the engine gives each copied target topic the ACLs of
// its source topic. kafkago.Target implements it.
type TopicACLCreator interface {
	TopicACLLister
	// CreateTopicACLs creates acls; creating one that exists is a no-op.
	CreateTopicACLs(ctx context.Context, acls []catchup.ACL) error
}

// ACLSync is what ACL sync did in a run (Options.SyncACLs).
type ACLSync struct {
	// Created are the ACLs created on the target topics.
	Created []catchup.ACL `json:"created,omitempty"`
	// Present counts the ACLs the rules give the target topics that the
	// target already had: nothing was sent for them.
	Present int `json:"present"`
	// Skipped are the source ACLs of the copied topics that the rules do
	// not copy, each with its reason.
	Skipped []SkippedACL `json:"skipped,omitempty"`
	// Error is why ACL sync failed, "" when it did not; the copy goes on.
	Error string `json:"error,omitempty"`
}

// SkippedACL is a source ACL that ACL sync did not copy, and why.
type SkippedACL struct {
	catchup.ACL
	Reason string `json:"reason"`
}

// Why ACL sync skips a source ACL (MirrorMaker 2's MirrorSourceConnector
// rules: shouldReplicateAcl, and only LITERAL patterns).
const (
	SkipAllowWrite = "ALLOW WRITE is not copied: only the replicator writes the target topic"
	SkipPrefixed   = "a PREFIXED pattern is not copied (MirrorMaker 2 copies LITERAL ones only): it may cover topics this pipeline does not copy; grant it on the target by hand, renamed"
)

// TargetACL returns the ACL that ACL sync gives target topic target for
// the source ACL a, or the reason it gives none. The rules are MirrorMaker
// 2's: only LITERAL patterns; ALLOW WRITE is never copied (only the
// replicator writes the copies), ALLOW ALL becomes ALLOW READ; DENY
// entries, and every other operation, are copied as they are; principal
// and host are kept; the resource is renamed to the target topic.
func TargetACL(a catchup.ACL, target string) (catchup.ACL, string) {
	switch {
	case a.Prefixed:
		return catchup.ACL{}, SkipPrefixed
	case a.Permission == catchup.ACLAllow && a.Operation == catchup.ACLWrite:
		return catchup.ACL{}, SkipAllowWrite
	}
	t := a
	t.Topic = target
	if a.Permission == catchup.ACLAllow && a.Operation == catchup.ACLAll {
		t.Operation = catchup.ACLRead
	}
	return t, ""
}

// syncACLs gives the target topics of from (target topic → source topic)
// the ACLs of their source topics as TargetACL makes them, creating only
// those the target lacks and never removing one. It runs at most once per
// ACLSyncInterval per Engine, failed or not, and returns nil when it did
// not run. A failure is in the result's Error and logged: the copy goes on.
func (e *Engine) syncACLs(ctx context.Context, from map[string]string) *ACLSync {
	src, ok := e.o.Source.(TopicACLLister)
	dst, ok2 := e.o.Target.(TopicACLCreator)
	if !e.o.SyncACLs || !ok || !ok2 || len(from) == 0 {
		return nil
	}
	now := e.o.Now()
	e.mu.Lock()
	due := e.lastACLSync.IsZero() || now.Sub(e.lastACLSync) >= e.o.ACLSyncInterval
	e.mu.Unlock()
	if !due {
		return nil
	}
	// A failed sync waits for the interval too, as MirrorMaker 2's does: a
	// cluster without an authorizer would otherwise warn on every run of
	// --every.
	e.mu.Lock()
	e.lastACLSync = now
	e.mu.Unlock()
	res, err := e.syncACLsNow(ctx, src, dst, from)
	if err != nil {
		res.Error = err.Error()
		e.o.Log.WarnContext(ctx, "topic ACLs not synced", "pipeline", e.o.Pipeline, "error", err)
		return res
	}
	for _, a := range res.Created {
		e.o.Log.InfoContext(ctx, "topic ACL created", "pipeline", e.o.Pipeline, "topic", a.Topic, "principal", a.Principal,
			"host", a.Host, "operation", a.Operation, "permission", a.Permission)
	}
	for _, s := range res.Skipped {
		e.o.Log.InfoContext(ctx, "topic ACL not copied", "pipeline", e.o.Pipeline, "topic", s.Topic, "prefixed", s.Prefixed,
			"principal", s.Principal, "operation", s.Operation, "permission", s.Permission, "reason", s.Reason)
	}
	return res
}

// syncACLsNow is syncACLs without the interval.
func (e *Engine) syncACLsNow(ctx context.Context, src TopicACLLister, dst TopicACLCreator, from map[string]string) (*ACLSync, error) {
	res := &ACLSync{}
	targetOf := make(map[string]string, len(from)) // source topic → target topic
	for t, s := range from {
		targetOf[s] = t
	}
	have, err := src.TopicACLs(ctx)
	if err != nil {
		return res, fmt.Errorf("describe source topic ACLs: %w", err)
	}
	var want []catchup.ACL
	for _, a := range have {
		t, copied := targetOf[a.Topic]
		if !copied && !a.Prefixed {
			continue // a topic this pipeline does not copy (or the * wildcard)
		}
		if a.Prefixed {
			if !prefixCovers(a.Topic, targetOf) {
				continue
			}
			res.Skipped = append(res.Skipped, SkippedACL{ACL: a, Reason: SkipPrefixed})
			continue
		}
		ta, why := TargetACL(a, t)
		if why != "" {
			res.Skipped = append(res.Skipped, SkippedACL{ACL: a, Reason: why})
			continue
		}
		if !slices.Contains(want, ta) { // ALLOW ALL and ALLOW READ of one principal make one READ
			want = append(want, ta)
		}
	}
	if len(want) == 0 {
		return res, nil
	}
	on, err := dst.TopicACLs(ctx)
	if err != nil {
		return res, fmt.Errorf("describe target topic ACLs: %w", err)
	}
	var create []catchup.ACL
	for _, a := range want {
		if slices.Contains(on, a) {
			res.Present++
		} else {
			create = append(create, a)
		}
	}
	slices.SortFunc(create, compareACL)
	if err := dst.CreateTopicACLs(ctx, create); err != nil {
		return res, fmt.Errorf("create target topic ACLs: %w", err)
	}
	res.Created = create
	return res, nil
}

// prefixCovers reports whether prefix matches one of the copied source
// topics (the keys of targetOf).
func prefixCovers(prefix string, targetOf map[string]string) bool {
	for s := range targetOf {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

func compareACL(a, b catchup.ACL) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
}
