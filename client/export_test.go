package client

// SetListBounds lowers the bounds of a paginated list for a test, which
// then need not fetch ten thousand pages; restore puts them back.
func SetListBounds(pages, items int) (restore func()) {
	p, i := maxPages, maxListItems
	maxPages, maxListItems = pages, items
	return func() { maxPages, maxListItems = p, i }
}

// WebSocketSending reports whether a message of c, a WebSocket's
// connection, is being written.
func WebSocketSending(c Conn) bool {
	w, ok := c.(*wsConn)
	return ok && len(w.sending) == 1
}
