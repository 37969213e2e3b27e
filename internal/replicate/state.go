package replicate

import "fmt"

// copyState is where the copy of one partition stands within a run. doc.go
// draws the machine; copyState.may is the one place that says which
// transition is allowed, and partitionCopy.enter the one place that makes
// it.
type copyState uint8

const (
	// stateLeased: the lease is held, nothing is in doubt, and copying has
	// not begun: the window is planned and, with provenance, reconciled
	// with the target next.
	stateLeased copyState = iota
	// stateTakenOver: the lease was found unreleased (its holder died, or is
	// this owner restarted), or another run held it between the survey and
	// the acquire, and, with provenance, the run is in doubt: a produce
	// request of the holder may still land. The window is not planned yet.
	stateTakenOver
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

// may reports whether a copy in state s may go to state to: the transitions
// doc.go draws, and no other.
func (s copyState) may(to copyState) bool {
	switch s {
	case stateLeased:
		return to == stateAnchoring || to == stateCopying || to == stateReleased // released: the plan or the reconciliation failed
	case stateTakenOver:
		return to == stateInDoubt // planned; if the plan fails, still in doubt, and the lease is kept
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
