package checkpoint_test

import (
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/checkpointtest"
)

func TestMemStore(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T, now func() time.Time) checkpoint.Store {
		return checkpoint.NewMemStore(now)
	})
}

func TestMemStoreRejects(t *testing.T) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	s := checkpoint.NewMemStore(nil) // the real clock: nothing here depends on it
	l, _, err := s.Acquire(t.Context(), "pl", p, "run-a", time.Minute)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"AcquireEmptyOwner", func() error { _, _, err := s.Acquire(t.Context(), "pl", p, "", time.Minute); return err }},
		{"AcquireZeroTTL", func() error { _, _, err := s.Acquire(t.Context(), "pl", p, "run-a", 0); return err }},
		{"RenewNegativeTTL", func() error { _, err := s.Renew(t.Context(), l, -time.Second); return err }},
	} {
		if err := tc.call(); err == nil {
			t.Errorf("%s = nil error, want an error", tc.name)
		}
	}
	if _, err := s.Renew(t.Context(), l, time.Minute); err != nil {
		t.Errorf("Renew after the refused calls: %v, want the lease untouched", err)
	}
}
