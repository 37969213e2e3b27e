package kafkago

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
)

func TestClassifyProduce(t *testing.T) {
	names := map[outcome]string{notAppended: "notAppended", maybeAppended: "maybeAppended", rejected: "rejected"}
	for _, tc := range []struct {
		name string
		err  error
		sent bool
		want outcome
	}{
		// Broker error codes (the request was sent and answered).
		{"not leader", kafka.NotLeaderForPartition, true, notAppended},
		{"leader not available", kafka.LeaderNotAvailable, true, notAppended},
		{"unknown topic or partition", kafka.UnknownTopicOrPartition, true, notAppended},
		{"not enough replicas", kafka.NotEnoughReplicas, true, notAppended},
		{"broker message appended to code", fmt.Errorf("%w: leader moved", kafka.NotLeaderForPartition), true, notAppended},
		{"request timed out", kafka.RequestTimedOut, true, maybeAppended},
		{"not enough replicas after append", kafka.NotEnoughReplicasAfterAppend, true, maybeAppended},
		{"storage error", kafka.KafkaStorageError, true, maybeAppended},
		{"network exception", kafka.NetworkException, true, maybeAppended},
		{"unknown server error", kafka.Unknown, true, maybeAppended},
		{"unexpected sequence error", kafka.OutOfOrderSequenceNumber, true, maybeAppended},
		{"message too large", kafka.MessageSizeTooLarge, true, rejected},
		{"record list too large", kafka.RecordListTooLarge, true, rejected},
		{"invalid record", kafka.InvalidRecord, true, rejected},
		{"corrupt message", kafka.InvalidMessage, true, rejected},
		{"invalid timestamp", kafka.InvalidTimestamp, true, rejected},
		{"topic authorization", kafka.TopicAuthorizationFailed, true, rejected},
		{"unsupported compression", kafka.UnsupportedCompressionType, true, rejected},

		// Transport errors, before or after the request was written.
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, false, notAppended},
		{"no leader in metadata", produce.NewError(protocol.NewErrNoLeader("t", 0)), false, notAppended},
		{"no topic in metadata", produce.NewError(protocol.NewErrNoTopic("t")), false, notAppended},
		{"broker not in metadata", kafka.BrokerNotAvailable, false, notAppended},
		{"caller gave up before the write", context.Canceled, false, notAppended},
		{"write failed part way", &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}, false, notAppended},
		{"EOF after the write", io.ErrUnexpectedEOF, true, maybeAppended},
		{"reset after the write", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true, maybeAppended},
		{"deadline after the write", context.DeadlineExceeded, true, maybeAppended},
		{"SASL refused", kafka.SASLAuthenticationFailed, false, rejected},
		{"SASL step failed", &saslStepError{errors.New("bad proof")}, false, rejected},
		{"unknown certificate authority", fmt.Errorf("x: %w", x509.UnknownAuthorityError{}), false, rejected},
		{"unsupported broker", fmt.Errorf("Produce: %w", errUnsupported), false, rejected},
	} {
		if got := classifyProduce(tc.err, tc.sent); got != tc.want {
			t.Errorf("classifyProduce(%s: %v, sent %v) = %s, want %s", tc.name, tc.err, tc.sent, names[got], names[tc.want])
		}
	}
}

func TestExchangeSent(t *testing.T) {
	for _, tc := range []struct {
		stage     stage
		sent      bool
		nextStage stage
	}{
		{pending, false, abandoned},
		{writing, true, writing},
		{writeFailed, false, writeFailed},
		{written, true, written},
	} {
		e := &exchange{stage: tc.stage}
		if got := e.sent(); got != tc.sent || e.stage != tc.nextStage {
			t.Errorf("sent() at stage %d = %v, stage %d; want %v, stage %d", tc.stage, got, e.stage, tc.sent, tc.nextStage)
		}
	}
	e := &exchange{stage: abandoned, msg: &produce.Request{}}
	if _, err := e.RawExchange(nil); !errors.Is(err, errAbandoned) {
		t.Errorf("RawExchange of an abandoned exchange = %v, want errAbandoned", err)
	}
}
