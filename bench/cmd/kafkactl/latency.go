package main

// The latency step: a steady-rate producer on the source and a reader of the
// target; the time from each record's timestamp to its copy being read.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type latencyResult struct {
	Produced int64   `json:"produced"`
	Seen     int64   `json:"seen"`
	Measured int     `json:"measured"` // after the warm-up
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
}

func latency(ctx context.Context, src, dst, topic string, rate, size int, d, warm time.Duration) (*latencyResult, error) {
	if dst == "" || rate <= 0 {
		return nil, errors.New("latency: -target and a positive -rate are required")
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(src, ",")...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(dst, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	value := make([]byte, size)
	for i := range value {
		value[i] = 'A' + byte(i%26)
	}
	start := time.Now()
	measureFrom := start.Add(warm)
	var (
		mu        sync.Mutex
		lat       []float64
		seen      int64
		produced  int64
		perr      error
		lastStart time.Time // records produced after this need not be seen
	)
	done := make(chan struct{})
	go func() { // the consumer
		defer close(done)
		for ctx.Err() == nil {
			fs := cons.PollFetches(pollCtx(ctx, 200*time.Millisecond))
			now := time.Now()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				if r.Timestamp.Before(start) {
					return // an earlier call's record
				}
				seen++
				if !r.Timestamp.Before(measureFrom) {
					lat = append(lat, float64(now.Sub(r.Timestamp).Microseconds())/1000)
				}
			})
			all := produced > 0 && seen >= produced && !lastStart.IsZero()
			mu.Unlock()
			if all {
				return
			}
		}
	}()
	// Every 10 ms, produce what the rate owes by now: a steady rate even
	// when a busy machine wakes this loop late.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Since(start) < d {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		mu.Lock()
		owed := int64(time.Since(start).Seconds()*float64(rate)) - produced
		produced += max(owed, 0)
		mu.Unlock()
		for range owed {
			prod.Produce(ctx, &kgo.Record{Value: value, Timestamp: time.Now()}, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					perr = cmp.Or(perr, err)
					mu.Unlock()
				}
			})
		}
	}
	if err := prod.Flush(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	lastStart = time.Now()
	mu.Unlock()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	if perr != nil {
		return nil, fmt.Errorf("latency: produce: %w", perr)
	}
	if seen < produced {
		return nil, fmt.Errorf("latency: %d records produced, %d seen on the target 30 s after the end", produced, seen)
	}
	r := &latencyResult{Produced: produced, Seen: seen, Measured: len(lat)}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.P50MS, r.P99MS, r.MaxMS = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return r, nil
}

// pollCtx bounds one poll; its cancel runs when the parent ends or at d.
func pollCtx(ctx context.Context, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(ctx, d)
	time.AfterFunc(d, cancel)
	return c
}
