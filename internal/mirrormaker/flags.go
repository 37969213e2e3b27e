package mirrormaker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-catchup/catchup/internal/config"
)

// convertFlags converts the command-line flags into the pipeline settings
// they give every pipeline.
func (c *mmConv) convertFlags() *mmPipe {
	mp := newMMPipe()
	p := &mp.p
	fl := c.flags
	note := func(key string, kind NoticeKind, format string, args ...any) {
		c.add(Notice{Key: key, Kind: kind, Msg: fmt.Sprintf(format, args...)})
	}
	origin := func(path, key string) { mp.origins[path] = mmOrigin{key: key} }

	include, exclude := mmTopics(fl.Whitelist), mmTopics(fl.Blacklist)
	// Check the patterns here, once, rather than once per pipeline in Parse.
	valid := func(key string, pats []string) bool {
		ok := true
		for _, pat := range pats {
			if err := config.CheckPattern(pat); err != nil {
				note(key, NoticeInvalid, "%v", err)
				mp.covered["topics"], ok = true, false
			}
		}
		return ok
	}
	includeOK, excludeOK := valid(fl.WhitelistFlag, include), valid("--blacklist", exclude)
	switch {
	case len(include) > 0:
		p.Topics.Include = include
		origin("topics.include", fl.WhitelistFlag)
		if includeOK {
			note(fl.WhitelistFlag, NoticeMapped, "→ topics.include: %s%s", strings.Join(include, ", "), topicsHow(include))
		}
	case len(exclude) > 0:
		p.Topics.Include = []string{".*"}
		origin("topics.include", "--blacklist")
		note(fl.WhitelistFlag, NoticeMapped, "not given: → topics.include: .* (every topic), less --blacklist")
	default:
		note(fl.WhitelistFlag, NoticeInvalid, "required, as by MirrorMaker: a Java regular expression or a comma-separated "+
			"list of topics; --whitelist '.*' selects every topic (internal topics are never copied)")
		mp.covered["topics"] = true
	}
	if len(exclude) > 0 {
		p.Topics.Exclude = exclude
		origin("topics.exclude", "--blacklist")
		if excludeOK {
			note("--blacklist", NoticeMapped, "→ topics.exclude: %s%s; exclude wins over include", strings.Join(exclude, ", "), topicsHow(exclude))
		}
	}

	for _, f := range []struct{ key, value, what string }{
		{"--num.streams", fl.NumStreams, "consumer threads"},
		{"--num.producers", fl.NumProducers, "producers"},
	} {
		if f.value == "" {
			continue
		}
		n, err := strconv.Atoi(f.value)
		if err != nil || n < 1 {
			note(f.key, NoticeInvalid, "%q is not a positive integer", f.value)
			continue
		}
		p.Parallelism = max(p.Parallelism, n)
		origin("parallelism", f.key)
		note(f.key, NoticeMapped, "→ parallelism (the larger of --num.streams and --num.producers): catchup copies up to %d "+
			"partitions of each pipeline at once where MirrorMaker ran %d %s (catchup's default is %d)", n, n, f.what, config.DefaultParallelism)
	}

	switch v := strings.ToLower(fl.AbortOnSendFailure); v {
	case "":
	case "true":
		note("--abort.on.send.failure", NoticeMapped, "catchup's behaviour: a failed send stops the partition, whose checkpoint stays before the failed records")
	case "false":
		if fl.AllowDataLoss {
			note("--abort.on.send.failure", NoticeWarning, "false made MirrorMaker skip records it failed to send "+
				"(accepted with --allow-data-loss); catchup still stops the partition and keeps its checkpoint before them, so the next run retries them")
		} else {
			note("--abort.on.send.failure", NoticeRefused, "false made MirrorMaker skip records it failed to send and commit "+
				"past them, losing them; catchup never skips: it stops the partition and keeps its checkpoint before them. "+
				"Drop the flag to accept that, or pass --allow-data-loss")
		}
	default:
		note("--abort.on.send.failure", NoticeInvalid, "%q is not valid; use true or false", fl.AbortOnSendFailure)
	}

	if v := fl.OffsetCommitIntervalMS; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			note("--offset.commit.interval.ms", NoticeInvalid, "%q is not a positive number of milliseconds", v)
		} else {
			p.CommitInterval = time.Duration(n) * time.Millisecond
			origin("commit_interval", "--offset.commit.interval.ms")
			note("--offset.commit.interval.ms", NoticeMapped, "→ commit_interval: the most time between two checkpoint commits of a partition")
		}
	}

	if fl.MessageHandler != "" {
		note("--message.handler", NoticeRefused, "catchup copies records unchanged (adding only its provenance header) and "+
			"cannot run the Java message handler %s: one that renamed topics can be replaced by target_topic in the YAML "+
			"(\"{source}.{topic}\", \"{topic}.mirror\"); one that filtered or changed records has no equivalent", fl.MessageHandler)
	}
	if fl.MessageHandlerArgs != "" {
		note("--message.handler.args", NoticeNotApplicable, "the arguments of --message.handler")
	}
	if fl.RebalanceListener != "" {
		note("--consumer.rebalance.listener", NoticeNotApplicable, "catchup does not join a consumer group, so there are no rebalances to listen to")
	}
	if fl.RebalanceListenerArgs != "" {
		note("--rebalance.listener.args", NoticeNotApplicable, "the arguments of --consumer.rebalance.listener")
	}
	if fl.NewConsumer {
		note("--new.consumer", NoticeNotApplicable, "catchup always reads from the brokers named by bootstrap.servers")
	}
	return mp
}

// mmTopics converts a MirrorMaker topic list as MirrorMaker read it (its
// TopicFilter): surrounding quotes and all spaces removed, and each comma
// meaning "or", here one pattern per comma-separated part. Commas inside
// [...] or {m,n} belong to the pattern.
func mmTopics(raw string) []string {
	s := strings.Trim(strings.TrimSpace(raw), `"'`)
	s = strings.ReplaceAll(s, " ", "")
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[', '{':
			depth++
		case ']', '}':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	return slices.DeleteFunc(out, func(p string) bool { return p == "" })
}

func topicsHow(pats []string) string {
	if len(pats) > 1 {
		return " (MirrorMaker read each comma as \"or\"; each pattern matches whole topic names, as there)"
	}
	return " (matched against whole topic names, as by MirrorMaker)"
}
