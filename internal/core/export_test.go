package core

// ClientsHeld is how many clients the server keeps quota entries for.
func ClientsHeld(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// TasksHeld is how many tasks the server holds in its table.
func TasksHeld(s *Server) int {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return len(s.tasks.byID)
}

// DeltaOp is one change a client makes through a copy of its session,
// for StateWritten.
type DeltaOp struct {
	Level     string
	Subscribe string // a URI
	Drop      string // a URI unsubscribed
}

// StateWritten is what a copy writes when the store keeps kept: kept with
// the ops recorded (before and after a save that failed) made on it, and
// the copy's own parts from mine.
func StateWritten(kept, mine SessionState, failed, later []DeltaOp) SessionState {
	record := func(ops []DeltaOp) stateDelta {
		var d stateDelta
		for _, op := range ops {
			switch {
			case op.Level != "":
				d.level = op.Level
			case op.Subscribe != "":
				d.subscribe(op.Subscribe, true)
			case op.Drop != "":
				d.subscribe(op.Drop, false)
			}
		}
		return d
	}
	return record(failed).then(record(later)).onto(kept, mine)
}
