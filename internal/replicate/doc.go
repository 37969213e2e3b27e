// Package replicate is the copy engine: it plans the windows of a pipeline,
// leases their partitions, copies each window from the Source to the Target
// and commits checkpoints to the Store. It declares the Source and Target it
// needs (kafka.go) and imports no Kafka or AWS SDK.
//
// Where each guarantee of package catchup is kept:
//
//   - No loss: a checkpoint is committed only with the offset after the last
//     record whose produce was acknowledged (lease.go: storeCommit); gaps
//     come from plan.Window and Source.Fetch as *catchup.GapError.
//   - No duplicates: before copying, and after a produce whose outcome is
//     unknown, reconcile reads the target backwards to the target end stored
//     at the last commit and resumes after the last source offset found;
//     settle first waits until the target's high watermark has reached its
//     leader's log end, or ends the partition StatusInDoubt. A partition
//     the store holds no checkpoint of (a store lost, new or restored, a
//     renamed pipeline) is not taken as never copied: adopt settles, reads
//     the target's tail back and resumes after its last copy, or fails
//     closed (catchup.ErrTargetAhead) when the tail cannot say.
//   - Fencing: every commit is conditional on the lease epoch, and no produce
//     is sent on a lease that has expired by the local clock.
//   - Deadline: copying stops Margin before the context deadline; the final
//     commit runs on a context that outlives the cancellation.
//
// # Files
//
//	kafka.go       Source and Target: what the engine needs of Kafka
//	engine.go      a run: options, start and stop offsets, a worker per partition
//	survey.go      watermarks and checkpoints without copying (plan, status), anchor checks
//	uncopied.go    the results of partitions a run does not copy: gone, idle, not started, leased
//	begin.go       start: latest across runs, from the topic's begin record
//	topics.go      the target topics: checked, created and grown
//	configsync.go  copied topic configs kept in step with the source
//	aclsync.go     source topic ACLs copied to the target topics by MirrorMaker 2's rules
//	partition.go   one partition's copy (copyPartition, run)
//	state.go       where that copy stands, and the one table of its transitions
//	lease.go       lease renewal and the commits, named by intent (commitProgress, commitIfDue, commitAndRelease, keepInDoubt)
//	reconcile.go   settle and reconcile with the target, from the end offsets targetEnds reads for the whole run; adopt the target's copies for a partition without a checkpoint, settled with the others at once (presettle)
//	anchor.go      the check that the source topic was not recreated
//	copyloop.go    fetch ahead while producing, window limits, loop prevention
//	retry.go       the one retry rule
//	report.go      what a run did, per partition: Report, Result, Status
//	age.go         a run's time figures: replication latency, record age, retention headroom
//	doc.go         this overview
//
// # The copy of one partition
//
// The state of one partition's copy within a run is a copyState. Its
// transitions, and no others, are allowed by copyState.may and made by
// partitionCopy.enter (an undrawn one panics):
//
//	stateDiagram-v2
//	    [*] --> leased: Acquire
//	    [*] --> taken_over: Acquire of a lease never released, or taken by another run since the survey, with provenance
//	    taken_over --> in_doubt: plan.Window
//	    leased --> anchoring: plan.Window, reconcileFrom or adopt; the checkpoint has a target end, or copies were adopted
//	    leased --> copying: plan.Window, reconcileFrom, adopt or no provenance; commitProgress
//	    in_doubt --> anchoring: settle, reconcileFrom (a takeover)
//	    in_doubt --> copying: settle, reconcileFrom (a takeover; resolveDoubt at the end)
//	    anchoring --> copying: passAnchor on the first batch; commitProgress
//	    copying --> in_doubt: a produce of unknown outcome, not reconciled
//	    leased --> released: commitAndRelease or release (the plan, reconciliation or adoption failed)
//	    anchoring --> released: commitAndRelease (the anchor check failed, or nothing to copy)
//	    copying --> released: commitAndRelease, or release when it had nothing to write
//	    released --> [*]
//	    taken_over --> [*]: keepInDoubt, the lease kept (the plan failed)
//	    in_doubt --> [*]: keepInDoubt, the lease kept (StatusInDoubt if replication_wait ran out)
//
// Not drawn: a lease another run holds ends the partition before any state
// (StatusLeased); a store write refused with checkpoint.ErrFenced (a renew,
// a commit) ends the copy in whatever state it is, with StatusFenced, no
// last commit, and a release that the store refuses.
//
// Each transition, and the tests that fail when it is broken (each was
// broken on purpose and seen to fail them; TestDocDrawsTheStateMachine
// checks that this list, the diagram and copyState.may agree):
//
//   - [*] → leased: TestStoreWritesOfEachPath, TestRunCopiesEveryWindowExactly
//   - [*] → taken_over: TestTakeoverWaitsForTheDeadHoldersLastRequest, TestTakeoverWaitsForReplication, TestTakeoverAfterTheSurveyWaitsForReplication
//   - taken_over → in_doubt: TestTakeoverWaitsForTheDeadHoldersLastRequest, TestTakeoverWaitsForReplication
//   - leased → anchoring: TestAnchorCheckRidesOnTheFirstFetch, TestRecreatedSourceTopicRefilledPastTheCheckpointFailsClosed, TestAdoptedCopiesOfARecreatedSourceTopicFailClosed
//   - leased → copying: TestStoreWritesOfEachPath, TestCrashAfterProduceBeforeCommitResumesWithoutDuplicates
//   - in_doubt → anchoring: TestStoreWritesOfEachPath
//   - in_doubt → copying: TestProduceInDoubtAtTheEndIsResolvedBeforeRelease
//   - anchoring → copying: TestStoreWritesOfEachPath
//   - copying → in_doubt: TestProduceInDoubtAtTheEndIsResolvedBeforeRelease, TestUnknownProduceWaitsForReplication, TestProduceInDoubtKeepsTheDeadline
//   - leased → released: TestStoreWritesOfEachPath, TestTargetAheadWithoutCopiesFailsClosed
//   - anchoring → released: TestStoreWritesOfEachPath
//   - copying → released: TestStoreWritesOfEachPath
//   - released → [*]: TestStoreWritesOfEachPath
//   - taken_over → [*]: TestStoreWritesOfEachPath
//   - in_doubt → [*]: TestTakeoverWaitsForReplication, TestUnknownProduceWaitsForReplication
//   - fenced (not drawn): TestStoreWritesOfEachPath, TestLostLeaseStopsProducing
//
// Time: every time the engine records or compares (lease renewal, the
// commit interval, a gap's time, durations) is read from Options.Now. Only
// waits are on the wall clock: a context's deadline and the backoff timers
// fire on it (tests run those under testing/synctest, or shorten them),
// and settle counts the time it slept rather than reading a clock, so that
// a frozen Options.Now cannot stall it.
package replicate
