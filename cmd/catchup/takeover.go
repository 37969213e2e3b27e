package main

import (
	"context"
	"errors"
	"time"

	"github.com/kafka-catchup/catchup/internal/mirrormaker"
)

// takeOver is the --take-over flags of mirrormaker2.
type takeOver struct {
	enabled bool
	topic   string
	settle  time.Duration
}

func (a *app) takeOver(ctx context.Context, m *mirrormaker.Migration, to takeOver) error {
	return errors.New("not yet")
}
