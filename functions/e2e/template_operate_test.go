package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// Lambda's bounds on an asynchronous event's age (EventInvokeConfig).
const (
	minEventAgeSeconds = 60
	maxEventAgeSeconds = 21600
)

// tickSlack is how long before the next tick a dispatch must end.
const tickSlack = 10

// TestScheduleConsistent deploys, for every ScheduleMinutes the template
// allows, the template as CloudFormation would resolve it, and holds the
// dispatcher to its schedule: the schedule's rate is that many minutes; a
// dispatch ends (its timeout) at least tickSlack seconds before the next
// tick, so that ticks never find one running; a tick delayed behind a
// dispatch is kept (MaximumEventAgeInSeconds) at least as long as that
// dispatch may last, rather than sent to the failed-invocations queue and
// its alarm, and no longer than a period, so that delayed ticks never
// pile up; the lag alarm's period is the schedule's.
func TestScheduleConsistent(t *testing.T) {
	allowed, _ := dig(rawTemplate(t), "Parameters", "ScheduleMinutes", "AllowedValues").([]any)
	if len(allowed) == 0 {
		t.Fatal("ScheduleMinutes has no AllowedValues")
	}
	rate := regexp.MustCompile(`^rate\((\d+) minutes?\)$`)
	for _, v := range allowed {
		minutes := scalar(v)
		raw := resolvedTemplate(t, map[string]any{"ScheduleMinutes": minutes})
		fn := func(path ...string) string {
			return scalar(dig(raw, append([]string{"Resources", "DispatchFunction", "Properties"}, path...)...))
		}
		expr := fn("Events", "Schedule", "Properties", "ScheduleExpression")
		m := rate.FindStringSubmatch(expr)
		if m == nil || m[1] != minutes {
			t.Errorf("ScheduleMinutes=%s: schedule %q, want rate(%s minutes)", minutes, expr, minutes)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		period := n * 60
		timeout, err1 := strconv.Atoi(fn("Timeout"))
		age, err2 := strconv.Atoi(fn("EventInvokeConfig", "MaximumEventAgeInSeconds"))
		if err1 != nil || err2 != nil {
			t.Errorf("ScheduleMinutes=%s: dispatcher timeout %q, event age %q: not numbers", minutes, fn("Timeout"), fn("EventInvokeConfig", "MaximumEventAgeInSeconds"))
			continue
		}
		what := fmt.Sprintf("ScheduleMinutes=%s (a tick every %d s), dispatcher Timeout %d s, MaximumEventAgeInSeconds %d s", minutes, period, timeout, age)
		if timeout+tickSlack > period {
			t.Errorf("%s: a dispatch may still run when the next tick comes; want Timeout at most %d s", what, period-tickSlack)
		}
		if age < timeout {
			t.Errorf("%s: a tick delayed behind a running dispatch expires into the failed-invocations queue (its alarm) before that dispatch ends; want MaximumEventAgeInSeconds at least the timeout", what)
		}
		if age > period {
			t.Errorf("%s: delayed ticks may pile up behind each other; want MaximumEventAgeInSeconds at most the period", what)
		}
		if age < minEventAgeSeconds || age > maxEventAgeSeconds {
			t.Errorf("%s: Lambda accepts an event age of %d to %d s", what, minEventAgeSeconds, maxEventAgeSeconds)
		}
		if p := scalar(dig(raw, "Resources", "LagAlarm", "Properties", "Period")); p != strconv.Itoa(period) {
			t.Errorf("%s: the lag alarm's period is %s s, want the schedule's", what, p)
		}
	}
}

// TestScheduleStateParameter: each value ScheduleState allows is the state
// of the dispatcher's schedule, ENABLED by default; DISABLED is how the
// runbook pauses replication (docs/lambda.md).
func TestScheduleStateParameter(t *testing.T) {
	raw := rawTemplate(t)
	allowed, _ := dig(raw, "Parameters", "ScheduleState", "AllowedValues").([]any)
	if def := dig(raw, "Parameters", "ScheduleState", "Default"); def != "ENABLED" || len(allowed) != 2 {
		t.Fatalf("parameter ScheduleState: default %v, allowed %v; want ENABLED, and ENABLED and DISABLED allowed", def, allowed)
	}
	for _, v := range allowed {
		got := dig(resolvedTemplate(t, map[string]any{"ScheduleState": v}), "Resources", "DispatchFunction", "Properties", "Events", "Schedule", "Properties", "State")
		if got != v {
			t.Errorf("ScheduleState=%v: the schedule's State is %v", v, got)
		}
	}
}

// TestReservedConcurrencyParameters: ReplicateConcurrency and
// DispatchConcurrency are the functions' reserved concurrency, and 0
// reserves none (for accounts with a low concurrency quota); the
// dispatcher caps its shards by the replicate function's reservation, or
// by MaxShards without one.
func TestReservedConcurrencyParameters(t *testing.T) {
	for _, c := range []struct{ replicate, dispatch string }{{"20", "1"}, {"7", "0"}, {"0", "1"}, {"0", "0"}} {
		raw := resolvedTemplate(t, map[string]any{"ReplicateConcurrency": c.replicate, "DispatchConcurrency": c.dispatch, "MaxShards": "13"})
		for fn, want := range map[string]string{"ReplicateFunction": c.replicate, "DispatchFunction": c.dispatch} {
			got := dig(raw, "Resources", fn, "Properties", "ReservedConcurrentExecutions")
			set := got != nil // AWS::NoValue
			switch {
			case want == "0" && set:
				t.Errorf("ReplicateConcurrency=%s DispatchConcurrency=%s: %s reserves %v, want none", c.replicate, c.dispatch, fn, got)
			case want != "0" && scalar(got) != want:
				t.Errorf("ReplicateConcurrency=%s DispatchConcurrency=%s: %s reserves %v, want %s", c.replicate, c.dispatch, fn, got, want)
			}
		}
		cap := c.replicate
		if cap == "0" {
			cap = "13"
		}
		if got := scalar(dig(raw, "Resources", "DispatchFunction", "Properties", "Environment", "Variables", "CATCHUP_REPLICATE_CONCURRENCY")); got != cap {
			t.Errorf("ReplicateConcurrency=%s: the dispatcher's CATCHUP_REPLICATE_CONCURRENCY is %s, want %s", c.replicate, got, cap)
		}
	}
}
