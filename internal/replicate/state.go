package replicate

import "fmt"

// copyState is where the copy of one partition stands within a run. doc.go
// draws the machine; copyState.may is the one place that says which
// transition is allowed, and partitionCopy.enter the one place that makes
// it.
type copyState uint8

const (
	// stateLeased: the lease is held and the window not planned yet.
	stateLeased copyState = iota
	// stateTakenOver: the lease was found unreleased (its holder died, or is
	// this owner restarted) and, with provenance, the run is in doubt: a
	// produce request of the holder may still land. The window is not
	// planned yet.
	stateTakenOver
	// statePlanned: the window is planned and nothing is in doubt; with
	// provenance, reconciliation with the target comes next.
	statePlanned
	// stateInDoubt: the window is planned, and the target may hold copies
	// this run has not reconciled (a takeover not yet reconciled, a produce
	// of unknown outcome when the run stops or its reconciliation fails).
	stateInDoubt
	// stateAnchoring: reconciled; the anchor check rides on the first
	// fetch of the copy, and nothing is committed or produced before it
	// passes.
	stateAnchoring
	// stateCopying: what the target holds is known: records are produced
	// and committed (also after a doubt resolved at the end of a run).
	stateCopying
	// stateReleased: the last commit released the lease; nothing more is
	// written.
	stateReleased
)

// String returns the state's name, as doc.go spells it.
func (s copyState) String() string {
	switch s {
	case stateLeased:
		return "leased"
	case stateTakenOver:
		return "taken_over"
	case statePlanned:
		return "planned"
	case stateInDoubt:
		return "in_doubt"
	case stateAnchoring:
		return "anchoring"
	case stateCopying:
		return "copying"
	case stateReleased:
		return "released"
	}
	return fmt.Sprintf("copyState(%d)", uint8(s))
}

// inDoubt reports whether the target may hold what this run has not
// reconciled: then the lease is not released at the end, so that the next
// run settles first.
func (s copyState) inDoubt() bool { return s == stateTakenOver || s == stateInDoubt }

// planned reports whether the window was planned (a run that failed its
// plan has nothing to reconcile from).
func (s copyState) planned() bool { return s != stateLeased && s != stateTakenOver }

// may reports whether a copy in state s may go to state to: the transitions
// doc.go draws, and no other.
func (s copyState) may(to copyState) bool {
	switch s {
	case stateLeased:
		return to == statePlanned || to == stateReleased // the plan failed: the last commit releases
	case stateTakenOver:
		return to == stateInDoubt // the plan failed: still in doubt, the lease is kept
	case statePlanned:
		return to == stateAnchoring || to == stateCopying || to == stateReleased
	case stateInDoubt:
		return to == stateAnchoring || to == stateCopying // settled and reconciled, at the start or the end of the run
	case stateAnchoring:
		return to == stateCopying || to == stateReleased
	case stateCopying:
		return to == stateInDoubt || to == stateReleased
	}
	return false // released: the end
}

// enter moves the copy to state to. A transition copyState.may does not
// allow is a bug in this package, and panics: the state would no longer say
// whether the lease may be released.
func (pc *partitionCopy) enter(to copyState) {
	if !pc.state.may(to) {
		panic(fmt.Sprintf("replicate: copy of %s: no transition from %s to %s", pc.p, pc.state, to))
	}
	pc.state = to
}
