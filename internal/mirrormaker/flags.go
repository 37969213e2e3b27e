package mirrormaker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-catchup/catchup/internal/config"
)

// convertFlags converts the command-line flags into the pipeline settings
// they give every pipeline.
func (c *converter) convertFlags() *pipe {
	mp := newPipe()
	p := &mp.p
	fl := c.flags
	note, origin := c.flagNote, mp.fromFlag

	c.topics(mp)

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

// flagNote adds a notice about a command-line flag.
func (c *converter) flagNote(flag string, kind NoticeKind, format string, args ...any) {
	c.add(Notice{Key: flag, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// fromFlag records that the pipeline setting at path came from flag.
func (mp *pipe) fromFlag(path, flag string) { mp.origins[path] = keyOrigin{key: flag} }
