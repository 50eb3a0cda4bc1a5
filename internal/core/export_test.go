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
