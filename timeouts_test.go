package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// trickle writes s one byte every gap until the server closes the
// connection or s runs out, and reports how long the server let it go on.
// It reads in the background so that an answer or a close is noticed.
func trickle(t *testing.T, conn net.Conn, s string, gap time.Duration) (time.Duration, string) {
	t.Helper()
	start := time.Now()
	answer := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(conn) // until the server closes
		answer <- string(b)
	}()
	for k := 0; k < len(s); k++ {
		select {
		case got := <-answer:
			return time.Since(start), got
		case <-time.After(gap):
		}
		if _, err := conn.Write([]byte{s[k]}); err != nil {
			break
		}
	}
	select {
	case got := <-answer:
		return time.Since(start), got
	case <-time.After(10 * time.Second):
		t.Fatal("the server neither answered nor closed the connection")
		return 0, ""
	}
}

// TestServer_slowClients is a slowloris test: a client that trickles its
// headers, or its body, one byte at a time is cut off by the server's
// --read-header-timeout and --read-timeout instead of holding a connection
// (and a goroutine) for as long as it likes; a body cut off this way is
// answered with the timeout error and stores nothing; and a normal request
// still works afterwards.
func TestServer_slowClients(t *testing.T) {
	// read is well above readHeader + the slack below, so that the header
	// case fails if only the read timeout were cutting it off.
	const readHeader, read = 400 * time.Millisecond, 2500 * time.Millisecond
	a := startApp(t, func(c *Config) {
		c.Server = ServerTimeouts{ReadHeader: readHeader, Read: read, Write: 15 * time.Second, Idle: time.Second}
	})
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", a.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	t.Run("headers", func(t *testing.T) {
		conn := dial()
		// 60 header bytes at 100 ms each would take 6 s.
		took, _ := trickle(t, conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "+strings.Repeat("a", 40)+"\r\n\r\n", 100*time.Millisecond)
		if took > readHeader+time.Second {
			t.Fatalf("a client trickling headers kept the connection for %v (read-header-timeout %v)", took, readHeader)
		}
	})

	t.Run("body", func(t *testing.T) {
		before := a.counts(t)
		body := `{"user_id":"slow","item_id":"loris"}` + strings.Repeat(" ", 60)
		conn := dial()
		head := fmt.Sprintf("POST /interactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		if _, err := conn.Write([]byte(head)); err != nil {
			t.Fatal(err)
		}
		// ~100 body bytes at 100 ms each would take 10 s.
		took, got := trickle(t, conn, body, 100*time.Millisecond)
		if took > read+2*time.Second {
			t.Fatalf("a client trickling its body kept the connection for %v (read-timeout %v)", took, read)
		}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
		if err != nil {
			t.Fatalf("no answer before the close: %v (%q)", err, got)
		}
		var out api.ErrorOut
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || out.Error.Code != api.CodeTimeout ||
			!strings.Contains(out.Error.Message, "read timeout") {
			t.Fatalf("slow body answered %d %+v, want 503 timeout naming the read timeout", resp.StatusCode, out.Error)
		}
		if after := a.counts(t); after != before {
			t.Fatalf("a cut-off body changed the store: %+v → %+v", before, after)
		}
	})

	t.Run("idle", func(t *testing.T) {
		conn := dial()
		if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("healthz: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		start := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = br.ReadByte()
		if err == nil || isTimeout(err) {
			t.Fatalf("an idle kept-alive connection was not closed by the server: %v", err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("an idle connection stayed open %v (idle-timeout 1s)", took)
		}
	})

	// The server still answers a well-behaved client.
	if code := a.postJSON(t, "/interactions", map[string]string{"user_id": "fast", "item_id": "i"}, nil); code != http.StatusCreated {
		t.Fatalf("a normal request after the slow ones: %d", code)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
