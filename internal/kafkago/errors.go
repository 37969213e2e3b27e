package kafkago

import (
	"context"
	"errors"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// marked adds a sentinel (catchup.ErrRetriable, catchup.ErrUnknownOutcome)
// to an error without changing its message.
type marked struct {
	err  error
	mark error
}

func (e *marked) Error() string   { return e.err.Error() }
func (e *marked) Unwrap() []error { return []error{e.err, e.mark} }

func mark(err, sentinel error) error { return &marked{err: err, mark: sentinel} }

// readError classifies the transport error of a request that changes
// nothing on the broker (metadata, list offsets, fetch): sending it again is
// always safe, so every failure is retriable except those that retrying
// cannot fix (authentication, TLS, an unsupported broker) and the caller's
// own cancellation.
func (c *Cluster) readError(ctx context.Context, err error) error {
	if a := c.authError(err); a != nil {
		return a
	}
	if errors.Is(err, errUnsupported) || ctx.Err() != nil {
		return err
	}
	if h := c.listenerHint(err); h != nil {
		err = h // still retriable: a broker restarting closes connections too
	}
	return mark(err, catchup.ErrRetriable)
}

// routingError reports whether err says the Transport did not know where
// to send a request, so that it sent nothing.
func routingError(err error) bool {
	return errors.Is(err, errRouting) || errors.Is(err, protocol.ErrNoTopic) ||
		errors.Is(err, protocol.ErrNoPartition) || errors.Is(err, protocol.ErrNoLeader) ||
		errors.Is(err, kafka.BrokerNotAvailable)
}

// retriableCode reports whether a broker error code on a read (metadata,
// list offsets, fetch) goes away by itself: leadership and metadata
// changes, a topic just created, a replica or log directory catching up.
func retriableCode(code kafka.Error) bool {
	switch code {
	case kafka.UnknownTopicOrPartition, kafka.LeaderNotAvailable, kafka.NotLeaderForPartition,
		kafka.ReplicaNotAvailable, kafka.BrokerNotAvailable, kafka.FencedLeaderEpoch,
		kafka.UnknownLeaderEpoch, kafka.OffsetNotAvailable, kafka.KafkaStorageError,
		kafka.RequestTimedOut, kafka.NetworkException, kafka.NotController, kafka.Unknown,
		kafka.PreferredLeaderNotAvailable, kafka.UnknownTopicID, kafka.FetchSessionIDNotFound,
		kafka.InvalidFetchSessionEpoch, kafka.ThrottlingQuotaExceeded:
		return true
	}
	return code.Temporary()
}

// codeError turns a broker error code of a read into an error, retriable
// when the code is.
func codeError(code int16) error {
	if code == 0 {
		return nil
	}
	if err := kafka.Error(code); retriableCode(err) {
		return mark(err, catchup.ErrRetriable)
	}
	return kafka.Error(code)
}
