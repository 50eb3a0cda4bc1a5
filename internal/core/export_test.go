package core

// ClientsHeld is how many clients the server keeps quota entries for.
func ClientsHeld(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}
