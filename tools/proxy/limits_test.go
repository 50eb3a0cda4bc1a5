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
		hs := newServer(u, c, tp)
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

// Stalled uploads are cut (408) after the body deadline, and hold no more
// than the budget together while they last: an upload beyond it gets 503
// at once, with or without a Content-Length. A body that flows slowly but
// steadily is not cut, nor is an answer that streams past the deadline;
// once the stalled ones are cut, their memory is back in the budget.
func TestHTTPBodyLimits(t *testing.T) {
	const idle = time.Second
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("stream") != "" { // an answer that outlasts the body deadline
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newServer(u, httpConfig{addr: ln.Addr().String(), limits: httpLimits{bodyIdle: idle, bodyMemory: 1 << 20}}, tp)
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	addr := ln.Addr().String()
	// open sends a POST's headers and the first part of its body, and
	// leaves the connection open.
	open := func(head string, part []byte) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\n"+head+"\r\n")
			_, _ = c.Write(part)
		}()
		return c
	}
	status := func(c net.Conn, within time.Duration) (int, time.Duration) {
		start := time.Now()
		_ = c.SetReadDeadline(start.Add(within))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, time.Since(start)
		}
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	start := time.Now()
	stalled := []net.Conn{ // 800,000 of the 1 MiB budget, 100 KiB sent
		open("Content-Length: 400000\r\n", bytes.Repeat([]byte("x"), 100<<10)),
		open("Content-Length: 400000\r\n", bytes.Repeat([]byte("x"), 100<<10)),
	}
	time.Sleep(200 * time.Millisecond) // both are in
	over := open("Content-Length: 400000\r\n", bytes.Repeat([]byte("x"), 100<<10))
	if code, took := status(over, idle/2); code != http.StatusServiceUnavailable {
		t.Errorf("an upload beyond the budget: status %d after %v, want 503 at once", code, took)
	}
	over.Close()
	chunked := open("Transfer-Encoding: chunked\r\n", fmt.Appendf(nil, "%x\r\n%s\r\n", 300<<10, bytes.Repeat([]byte("x"), 300<<10)))
	if code, took := status(chunked, idle/2); code != http.StatusServiceUnavailable {
		t.Errorf("a chunked upload growing beyond the budget: status %d after %v, want 503 at once", code, took)
	}
	chunked.Close()
	for i, c := range stalled {
		code, _ := status(c, 5*time.Second)
		if took := time.Since(start); code != http.StatusRequestTimeout || took < idle || took > idle+4*time.Second {
			t.Errorf("stalled upload %d: status %d after %v, want 408 after %v", i, code, took, idle)
		}
		c.Close()
	}
	// Cut, they hold nothing: a body of nearly the whole budget passes,
	// in pieces slower than the deadline in all but faster in each.
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 900<<10) + `"}}`
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < 4; i++ {
			_, _ = io.WriteString(pw, body[i*len(body)/4:(i+1)*len(body)/4])
			time.Sleep(idle / 2)
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", pr)
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
	// An answer streams past the body deadline.
	resp, err = http.Post("http://"+addr+"/mcp?stream=1", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(got), `"result":{}`) {
		t.Errorf("a stream longer than the body deadline: %q", got)
	}
}
