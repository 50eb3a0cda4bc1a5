package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The HTTP proxy listens on loopback only, unless --allow-remote.
func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:9000", true}, {"127.0.0.2:0", true}, {"localhost:9000", true}, {"[::1]:9000", true},
		{"0.0.0.0:9000", false}, {":9000", false}, {"[::]:9000", false}, {"192.168.1.10:9000", false}, {"ci-box:9000", false},
	} {
		if err := checkListen(tc.addr, false); (err == nil) != tc.ok {
			t.Errorf("checkListen(%q) = %v, want ok %v", tc.addr, err, tc.ok)
		}
		if err := checkListen(tc.addr, true); err != nil {
			t.Errorf("checkListen(%q, --allow-remote) = %v", tc.addr, err)
		}
	}
	// Without the flag, the proxy refuses 0.0.0.0 before it binds, and
	// says how to go on.
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Command([]string{"--upstream", "http://127.0.0.1:1/mcp", "--http", "0.0.0.0:0"}, &out, &errOut)
	}()
	select {
	case code := <-done:
		if msg := errOut.String(); code != 2 || !strings.Contains(msg, "not a loopback address") || !strings.Contains(msg, "--allow-remote") {
			t.Errorf("exit %d, stderr %q", code, msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy listened on 0.0.0.0 without --allow-remote")
	}
}

// Listening on loopback, the proxy answers 403 to a request whose Host is
// not a loopback name or address (DNS rebinding), and passes the others;
// with --allow-remote (here: configured for 0.0.0.0, served on the same
// loopback listener) a foreign Host passes, as the client sent it.
func TestHTTPLoopbackHost(t *testing.T) {
	var hosts []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hosts = append(hosts, r.Host) }))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	for _, remote := range []bool{false, true} {
		hosts = nil
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c := httpConfig{addr: ln.Addr().String(), allowRemote: remote, limits: defaultLimits}
		if remote {
			c.addr = "0.0.0.0:0"
		}
		tp, _ := newTap(nil, false, io.Discard)
		hs, _ := newServer(u, c, tp)
		go func() { _ = hs.Serve(ln) }()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		for _, tc := range []struct {
			host string
			want int
		}{
			{"evil.example", http.StatusForbidden}, {"evil.example:" + port, http.StatusForbidden}, {"192.0.2.1:" + port, http.StatusForbidden},
			{"localhost:" + port, http.StatusOK}, {"127.0.0.1:" + port, http.StatusOK}, {"[::1]:" + port, http.StatusOK}, {"LOCALHOST", http.StatusOK},
		} {
			req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/mcp", nil)
			req.Host = tc.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := tc.want; resp.StatusCode != want && !(remote && resp.StatusCode == http.StatusOK) {
				t.Errorf("remote %v, Host %s: status %d, want %d", remote, tc.host, resp.StatusCode, want)
			}
		}
		if want := 4; remote {
			want = 7
			if len(hosts) != want || hosts[0] != "evil.example" {
				t.Errorf("remote: the upstream saw %q", hosts)
			}
		} else if len(hosts) != want {
			t.Errorf("loopback: the upstream saw %q, want the 4 loopback requests only", hosts)
		}
		hs.Close()
	}
}

// Stalled uploads hold what they sent (the buffer it has grown to), not
// what their Content-Length claims, and no more than the budget together:
// an upload whose bytes go beyond it gets 503 as they come, with or
// without a Content-Length. They are cut (408) once they send nothing for
// the body timeout, and their memory is back in the budget. A body that
// flows slowly but steadily is not cut, nor is an answer that streams
// past the timeout.
func TestHTTPBodyLimits(t *testing.T) {
	const idle = time.Second
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("stream") != "" { // an answer that outlasts the body timeout
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(2 * idle)
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"got":%d}}`, len(b))
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	tp, _ := newTap(io.Discard, false, io.Discard)
	p := newHandler(u, nil, tp, httpLimits{bodyIdle: idle, bodyMemory: 1 << 20})
	front := httptest.NewServer(p)
	defer front.Close()
	addr := strings.TrimPrefix(front.URL, "http://")
	stop := make(chan struct{})
	stalled := []net.Conn{ // 400 KiB each of 500,000 sent: the buffers grow to 500,000
		rawPOST(t, addr, "Content-Length: 500000\r\n", bytes.Repeat([]byte("x"), 400<<10), stop),
		rawPOST(t, addr, "Content-Length: 500000\r\n", bytes.Repeat([]byte("x"), 400<<10), stop),
	}
	waitFor(t, "the stalled uploads to hold their bytes", func() bool { return p.requests.remaining() <= 1<<20-2*500000 })
	over := rawPOST(t, addr, "Content-Length: 400000\r\n", bytes.Repeat([]byte("x"), 100<<10), nil)
	if code, took := status(over, 5*time.Second); code != http.StatusServiceUnavailable {
		t.Errorf("an upload beyond the budget: status %d after %v, want 503", code, took)
	}
	over.Close()
	chunked := rawPOST(t, addr, "Transfer-Encoding: chunked\r\n", fmt.Appendf(nil, "%x\r\n%s\r\n", 300<<10, bytes.Repeat([]byte("x"), 300<<10)), nil)
	if code, took := status(chunked, 5*time.Second); code != http.StatusServiceUnavailable {
		t.Errorf("a chunked upload growing beyond the budget: status %d after %v, want 503", code, took)
	}
	chunked.Close()
	close(stop) // the stalled uploads send nothing more
	start := time.Now()
	for i, c := range stalled {
		code, _ := status(c, 5*time.Second)
		if took := time.Since(start); code != http.StatusRequestTimeout || took > idle+4*time.Second {
			t.Errorf("stalled upload %d: status %d after %v, want 408 after %v", i, code, took, idle)
		}
		c.Close()
	}
	waitFor(t, "the budget to be whole again", func() bool { return p.requests.remaining() == 1<<20 })
	// A body of nearly the whole budget passes, in pieces slower than the
	// timeout in all but faster in each.
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 900<<10) + `"}}`
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < 4; i++ {
			_, _ = io.WriteString(pw, body[i*len(body)/4:(i+1)*len(body)/4])
			time.Sleep(idle / 2)
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp", pr)
	req.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`"got":%d`, len(body)); resp.StatusCode != http.StatusOK || !strings.Contains(string(got), want) {
		t.Errorf("a slow body within the budget: status %d, %s; want 200 and %s", resp.StatusCode, got, want)
	}
	// An answer streams past the body timeout.
	resp, err = http.Post(front.URL+"/mcp?stream=1", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(got), `"result":{}`) {
		t.Errorf("a stream longer than the body timeout: %q", got)
	}
	waitFor(t, "the budget to be whole again", func() bool { return p.requests.remaining() == 1<<20 })
}

// Four uploads that claim the whole budget each and send a byte now and
// then (never idle) hold next to nothing: a POST of most of the budget
// still passes. (They held it all, from their Content-Length, and every
// other POST got 503.)
func TestHTTPBodyClaimsHoldNothing(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"got":%d}}`, len(b))
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	tp, _ := newTap(io.Discard, false, io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := newServer(u, httpConfig{addr: ln.Addr().String(), limits: httpLimits{bodyIdle: 5 * time.Second, bodyMemory: 1 << 20}}, tp)
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	addr := ln.Addr().String()
	stop := make(chan struct{})
	defer close(stop)
	for range 4 {
		c := rawPOST(t, addr, "Content-Length: 1048576\r\n", []byte("{"), stop)
		defer c.Close()
	}
	time.Sleep(300 * time.Millisecond) // they are in
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 900<<10) + `"}}`
	resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`"got":%d`, len(body)); resp.StatusCode != http.StatusOK || !strings.Contains(string(got), want) {
		t.Errorf("a POST beside four that claim the budget: status %d, %s; want 200 and %s", resp.StatusCode, got, want)
	}
}

// An upload that trickles (a byte well within the body timeout, again and
// again) is cut (408) at the body deadline; one that comes in time passes.
func TestHTTPBodyDeadline(t *testing.T) {
	const deadline = 1500 * time.Millisecond
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	tp, _ := newTap(io.Discard, false, io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := newServer(u, httpConfig{addr: ln.Addr().String(), limits: httpLimits{bodyIdle: time.Second, bodyDeadline: deadline, bodyMemory: 1 << 20}}, tp)
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	addr := ln.Addr().String()
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	c := rawPOST(t, addr, "Content-Length: 1000\r\n", []byte("{"), stop)
	defer c.Close()
	code, _ := status(c, deadline+5*time.Second)
	if took := time.Since(start); code != http.StatusRequestTimeout || took < deadline {
		t.Errorf("a trickling upload: status %d after %v, want 408 after %v", code, took, deadline)
	}
	resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a body in time: status %d", resp.StatusCode)
	}
}

// A POST's body is let go once it is recorded and forwarded, not when its
// answer ends: while one POST's event stream stays open, another POST of
// most of the budget passes.
func TestHTTPBodyReleasedOnceRecorded(t *testing.T) {
	later := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("stream") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
			w.(http.Flusher).Flush()
			<-later
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":2,"result":{"got":%d}}`, len(b))
	}))
	defer upstream.Close()
	defer close(later) // before the upstream closes
	u, _ := url.Parse(upstream.URL + "/mcp")
	tp, _ := newTap(io.Discard, false, io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := newServer(u, httpConfig{addr: ln.Addr().String(), limits: httpLimits{bodyIdle: 5 * time.Second, bodyMemory: 1 << 20}}, tp)
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	base := "http://" + ln.Addr().String() + "/mcp"
	body := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}`, id, strings.Repeat("p", 700<<10))
	}
	streaming, err := http.Post(base+"?stream=1", "application/json", strings.NewReader(body(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer streaming.Body.Close()
	if line, err := bufio.NewReader(streaming.Body).ReadString('\n'); err != nil || !strings.Contains(line, "notifications/message") {
		t.Fatalf("the stream's first event: %q, %v", line, err)
	}
	resp, err := http.Post(base, "application/json", strings.NewReader(body(2)))
	if err != nil {
		t.Fatalf("a POST while another's answer streams: %v (refused before its body was in)", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`"got":%d`, len(body(2))); resp.StatusCode != http.StatusOK || !strings.Contains(string(got), want) {
		t.Errorf("a POST while another's answer streams: status %d, %s; want 200 and %s", resp.StatusCode, got, want)
	}
}

// readBody holds, in the budget, all it allocates: its buffer, which the
// body is read into, and no buffer beside.
func TestReadBodyAllocatesWhatItHolds(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 40) + `"}}`)
	for _, contentLength := range []int64{int64(len(body)), -1} {
		bodies := &budget{left: 1 << 20}
		r := &rewound{data: body}
		req := &http.Request{Method: http.MethodPost, Body: r, ContentLength: contentLength}
		const runs = 100
		var held int64
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			r.off = 0
			b, h, status, err := readBody(req, bodies, maxBody)
			if status != 0 || !bytes.Equal(b, body) {
				t.Fatalf("Content-Length %d: status %d (%v), read %q", contentLength, status, err, b)
			}
			bodies.give("", h)
			held += h
		}
		runtime.ReadMemStats(&after)
		if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > held+runs*(8<<10) {
			t.Errorf("Content-Length %d: %d bytes allocated a body, %d held", contentLength, alloc/runs, held/runs)
		}
	}
}

// rewound is a request body read again from off.
type rewound struct {
	data []byte
	off  int
}

func (r *rewound) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}

func (r *rewound) Close() error { return nil }

// rawPOST sends a POST's headers (with head) and part of its body to addr,
// then, until stop closes (nil: never), a byte of its body now and then,
// and leaves the connection open.
func rawPOST(t *testing.T, addr, head string, part []byte, stop <-chan struct{}) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if _, err := io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\n"+head+"\r\n"); err != nil {
			return
		}
		if _, err := c.Write(part); err != nil || stop == nil {
			return
		}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	return c
}

// status reads the status of the answer on c, within the time given.
func status(c net.Conn, within time.Duration) (int, time.Duration) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(within))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, time.Since(start)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// waitFor waits, 10s at most, until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

// remaining is what is left of b.
func (b *budget) remaining() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left
}

// A client that reads nothing of an answer for the body timeout is cut:
// the proxy does not hold the answer (nor the upstream) for good. One
// that reads it slowly, pausing less than the timeout each time, gets it
// whole. Small socket buffers make the proxy's writes wait on the client.
func TestHTTPStalledReaderIsCut(t *testing.T) {
	const idle = time.Second // a steady reader pauses a tenth of it: room for a loaded machine under -race
	answer := `{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("p", 2<<20) + `"}}`
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
		_, _ = io.WriteString(w, answer)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	tp, _ := newTap(io.Discard, false, io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := newServer(u, httpConfig{addr: ln.Addr().String(), limits: httpLimits{bodyIdle: idle, bodyMemory: 64 << 20}}, tp)
	go func() { _ = hs.Serve(smallBuffers{ln}) }()
	defer hs.Close()
	addr := ln.Addr().String()
	get := func(pause time.Duration, each int) ([]byte, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(16 << 10)
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		req := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(req), req)
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 4<<10), nil)
		if err != nil {
			return nil, err
		}
		var got []byte
		for {
			time.Sleep(pause)
			b, err := io.ReadAll(io.LimitReader(resp.Body, int64(each)))
			got = append(got, b...)
			if err != nil || len(b) < each {
				if err == nil && len(got) < len(answer) {
					err = io.ErrUnexpectedEOF
				}
				return got, err
			}
		}
	}
	if got, err := get(4*idle, len(answer)); err == nil || len(got) == len(answer) {
		t.Errorf("a client that read nothing for %v: got %d bytes of %d (%v), want it cut", 4*idle, len(got), len(answer), err)
	}
	if got, err := get(idle/10, 256<<10); err != nil || string(got) != answer {
		t.Errorf("a client that read steadily: got %d bytes of %d (%v), want them all", len(got), len(answer), err)
	}
}

// smallBuffers accepts connections with small send buffers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// The answers held to be recorded count against --body-memory (apart
// from the request bodies): one larger than it passes whole but
// unrecorded, JSON or an event, and the next is recorded. (They were
// held up to 64 MiB each, however many, whatever --body-memory.)
func TestHTTPAnswersWithinBodyMemory(t *testing.T) {
	big := strings.Repeat("b", 2<<20)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("stream") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"%s\"}}\n\n", big)
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"small\":true}}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("big") != "" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"%s"}}`, big)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"small":true}}`)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := newServer(u, httpConfig{addr: ln.Addr().String(), limits: httpLimits{bodyIdle: 5 * time.Second, bodyMemory: 1 << 20}}, tp)
	go func() { _ = hs.Serve(ln) }()
	base := "http://" + ln.Addr().String() + "/mcp"
	for _, q := range []string{"?big=1", "", "?stream=1"} {
		resp, err := http.Post(base+q, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if q != "" && !strings.Contains(string(got), big) {
			t.Errorf("%s: the client got %d bytes, not the answer whole", q, len(got))
		}
	}
	hs.Close()
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	if recorded := rec.String(); strings.Contains(recorded, big[:1<<20]) || !strings.Contains(recorded, `"id":2`) || !strings.Contains(recorded, `"id":3`) {
		t.Errorf("the recording (%d bytes) holds a larger answer than --body-memory, or lacks the small ones", len(recorded))
	}
}

// The answers' buffers share one budget: what one holds another cannot
// take (it passes unrecorded), and each gives all it held back once
// recorded, or closed (its client cut) before.
func TestAnswerBuffersShareABudget(t *testing.T) {
	answers := &budget{left: 1 << 20}
	answer := func(n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("p", n) + `"}}`)
	}
	var recorded []int
	record := func(b []byte) { recorded = append(recorded, len(b)) }
	first := &jsonBody{ReadCloser: io.NopCloser(&pausedReader{data: answer(700 << 10)}), want: -1, max: maxLine, hold: hold{budget: answers}, done: record}
	p := make([]byte, 1<<20)
	if _, err := first.Read(p); err != nil || answers.remaining() > 1<<20-700<<10 {
		t.Fatalf("the first answer, read but not ended (%v): the budget has %d left", err, answers.remaining())
	}
	second := &jsonBody{ReadCloser: io.NopCloser(bytes.NewReader(answer(700 << 10))), want: -1, max: maxLine, hold: hold{budget: answers}, done: record}
	if passed, _ := io.ReadAll(second); len(passed) != len(answer(700<<10)) || len(recorded) != 0 {
		t.Errorf("beyond the budget: passed %d bytes, recorded %v; want it passed whole and not recorded", len(passed), recorded)
	}
	events := &sseBody{ReadCloser: io.NopCloser(strings.NewReader("data: " + string(answer(100<<10)) + "\n\n")),
		events: eventSplitter{max: maxLine, hold: hold{budget: answers}}, message: func(_ string, b []byte) { record(b) }}
	if _, err := io.ReadAll(events); err != nil || len(recorded) != 1 {
		t.Errorf("an event within what is left: recorded %v (%v)", recorded, err)
	}
	if _, err := first.Read(p); err != io.EOF || len(recorded) != 2 {
		t.Errorf("the first answer's end (%v): recorded %v", err, recorded)
	}
	events.Close()
	if left := answers.remaining(); left != 1<<20 {
		t.Errorf("all recorded or closed: the budget has %d left, want %d", left, 1<<20)
	}
	cut := &sseBody{ReadCloser: io.NopCloser(strings.NewReader("data: " + string(answer(200<<10)))),
		events: eventSplitter{max: maxLine, hold: hold{budget: answers}}, message: func(_ string, b []byte) { record(b) }}
	_, _ = io.ReadAll(cut)
	cutJSON := &jsonBody{ReadCloser: io.NopCloser(&pausedReader{data: answer(200 << 10)}), want: -1, max: maxLine, hold: hold{budget: answers}, done: record}
	_, _ = cutJSON.Read(p)
	if answers.remaining() >= 1<<20-400<<10 {
		t.Errorf("two answers in the middle hold %d", 1<<20-answers.remaining())
	}
	cut.Close()
	cutJSON.Close()
	if left := answers.remaining(); left != 1<<20 || len(recorded) != 2 {
		t.Errorf("closed in the middle: the budget has %d left, want %d; recorded %v", left, 1<<20, recorded)
	}
}
