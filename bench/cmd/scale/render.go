package main

// The markdown table of bench/SCALE.md and its monthly cost columns.

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// Monthly cost assumptions (us-east-1, on-demand, stated in the table).
const (
	runsPerMonth   = 30 * 24 * 12 // a 5-minute schedule
	dynamoWriteUSD = 0.625 / 1e6  // per write request unit (on-demand, 2025 price)
	dynamoReadUSD  = 0.125 / 1e6  // per read request unit
)

// render writes the table of steps.
func render(steps []step, label string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s\n\n", strings.TrimSpace("Scale "+label))
	b.WriteString("| partitions/topics | step | Kafka requests (source) | Kafka requests (target) | DynamoDB requests | DynamoDB items read | peak RSS MiB | goroutines | threads | wall s | block-out KiB | DynamoDB $/month at 5 min |\n")
	b.WriteString("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range steps {
		writes, reads := 0, 0
		for op, n := range s.dynamo {
			switch op {
			case "UpdateItem", "PutItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
				writes += n
			default:
				reads += n
			}
		}
		cost := float64(runsPerMonth) * (float64(writes)*dynamoWriteUSD + float64(reads)*dynamoReadUSD)
		name := s.name
		if s.err != "" {
			name += " (failed: " + firstLine(s.err) + ")"
		}
		goroutines := "—"
		if s.goroutines >= 0 {
			goroutines = fmt.Sprint(s.goroutines)
		}
		fmt.Fprintf(&b, "| %d/%d | %s | %s | %s | %s | %d | %d | %s | %d | %.1f | %d | %.2f |\n",
			s.partitions, s.topics, name, counts(s.kafka["source"]), counts(s.kafka["target"]), counts(s.dynamo), s.itemsRead,
			s.rssKB/1024, goroutines, s.threads, s.wall.Seconds(), s.outBytes/1024, cost)
	}
	b.WriteString("\nDynamoDB cost assumes on-demand at $0.625 per million writes and $0.125 per million reads (one request unit each; items are small), 8,640 runs a month. " +
		"For comparison, MSK Replicator costs $0.30 per replicator-hour ($219/month) plus $0.08 per GB replicated (us-east-1, assumed); " +
		"Lambda for the run itself is not included here. " +
		"Goroutines are sampled (every millisecond) in the in-process children only, the dispatcher and the worker (— for the CLI); threads are the OS threads of every child, sampled every 10 ms. " +
		"Peak RSS is the child's VmHWM, sampled every 10 ms (rusage maxrss, used before, also counts this harness's memory at the fork). " +
		"Block-out is what the child wrote to disk (the file store's fsynced files; 0 with DynamoDB).\n")
	return b.String()
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// writeSection replaces (or appends) the "## Scale" section of path, from
// its heading to the next "## " heading, keeping other sections (other
// engineers regenerate them).
func writeSection(path, label, table string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	begin := fmt.Sprintf("<!-- bench-scale %s begin -->", label)
	end := fmt.Sprintf("<!-- bench-scale %s end -->", label)
	block := begin + "\n" + table + end
	s := string(old)
	if i, j := strings.Index(s, begin), strings.Index(s, end); i >= 0 && j > i {
		s = s[:i] + block + s[j+len(end):]
	} else {
		s += "\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
