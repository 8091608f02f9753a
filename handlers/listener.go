package handlers

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/recsys-engine/recsys/api"
)

// Listener wraps the API's listener so that the replies net/http's server
// writes by itself, before any handler runs, carry the error envelope too.
// The server answers a request it cannot parse (an invalid %-escape in the
// path such as /items/100% or /items/%zz, a malformed request line or
// header, a missing Host) with a plain-text 400, a 431 or a 501 written
// straight to the connection, with no hook to change it; this connection
// rewrites exactly those replies, which no handler's answer can resemble (a
// handler's has a Date header and its headers in sorted order). What the
// server ends without any reply (a read timeout, a reset) stays without.
func Listener(ln net.Listener) net.Listener { return envelopeListener{ln} }

type envelopeListener struct{ net.Listener }

func (l envelopeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &envelopeTCPConn{tc}, nil
	}
	return &envelopeConn{c}, nil
}

// envelopeConn is a connection whose server-written error replies are
// rewritten (see Listener).
type envelopeConn struct{ net.Conn }

func (c *envelopeConn) Write(p []byte) (int, error) { return writeEnveloped(c.Conn, p) }

// envelopeTCPConn keeps, by embedding, what net/http uses of a
// *net.TCPConn: CloseWrite (after a 431) and ReadFrom (sendfile for the
// dashboard's files, whose bytes are no server reply).
type envelopeTCPConn struct{ *net.TCPConn }

func (c *envelopeTCPConn) Write(p []byte) (int, error) { return writeEnveloped(c.TCPConn, p) }

// serverErrorHeaders are the headers net/http's server writes after the
// status line of a reply of its own (net/http/server.go, conn.serve).
const serverErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// writeEnveloped writes p to w, or the enveloped equivalent when p is one
// of net/http's own error replies.
func writeEnveloped(w io.Writer, p []byte) (int, error) {
	if b, ok := envelopeServerError(p); ok {
		if _, err := w.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.Write(p)
}

// envelopeServerError turns net/http's "HTTP/1.1 400 Bad Request" +
// serverErrorHeaders + text into the same status with a JSON envelope.
func envelopeServerError(p []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if len(p) > 1024 || !bytes.HasPrefix(p, []byte(proto)) {
		return nil, false
	}
	end := bytes.Index(p, []byte("\r\n"))
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(serverErrorHeaders)) || len(p) < len(proto)+3 {
		return nil, false
	}
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if err != nil || status < 400 {
		return nil, false
	}
	text := string(p[end+len(serverErrorHeaders):])
	// The texts are net/http's: "400 Bad Request" alone, "400 Bad Request:
	// missing required Host header", "Unsupported transfer encoding".
	code, msg := api.CodeInvalid, ""
	switch status {
	case http.StatusBadRequest:
		msg = "malformed HTTP request: the request line or a header does not parse; an invalid %-escape in the path, such as a lone % or %zz, is the usual cause (send % as %25)"
		if _, detail, ok := strings.Cut(text, ": "); ok {
			msg = "malformed HTTP request: " + detail
		}
	case http.StatusRequestHeaderFieldsTooLarge:
		code, msg = api.CodeTooLarge, "the request's header fields are larger than the server accepts"
	case http.StatusNotImplemented:
		msg = "the request's Transfer-Encoding is not supported; send the body with Content-Length or chunked"
	default:
		_, detail, _ := strings.Cut(text, ": ")
		msg = "malformed HTTP request: " + cmp.Or(detail, text)
	}
	body, err := json.Marshal(api.ErrorOut{Error: api.ErrorBody{Code: code, Message: msg}})
	if err != nil {
		return nil, false
	}
	body = append(body, '\n')
	out := fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		status, http.StatusText(status), len(body))
	return append(out, body...), true
}

// envelopeErrors makes the error answers of a handler that is not ours
// (http.FileServer's plain-text "404 page not found", promhttp's) the
// error envelope, with the same status.
func (h *handler) envelopeErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&envelopeWriter{ResponseWriter: w, r: r, h: h}, r)
	})
}

// envelopeWriter passes a successful answer through and replaces the
// body of an error answer by the envelope.
type envelopeWriter struct {
	http.ResponseWriter
	r       *http.Request
	h       *handler
	status  int
	replace bool
}

func (e *envelopeWriter) WriteHeader(status int) {
	if e.status != 0 {
		return
	}
	e.status = status
	if status < 400 {
		e.ResponseWriter.WriteHeader(status)
		return
	}
	e.replace = true
	code := map[int]string{http.StatusNotFound: api.CodeNotFound, http.StatusForbidden: api.CodeForbidden,
		http.StatusMethodNotAllowed: api.CodeMethodNotAllowed}[status]
	// A HEAD names the GET it stands for: its headers, Content-Length
	// included, must be the GET's, and it sends no body anyway.
	method := e.r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	msg := fmt.Sprintf("%s %s: %s", method, e.r.URL.Path, http.StatusText(status))
	switch {
	case code != "":
	case status >= 500:
		e.h.log.Error("internal error", "request_id", middleware.GetReqID(e.r.Context()), "route", routePattern(e.r), "status", status)
		e.h.metrics.internalErrors.Inc()
		code, msg = api.CodeInternal, "internal error"
	default:
		code = api.CodeInvalid
	}
	hd := e.Header()
	for _, k := range []string{"Content-Type", "Content-Length", "Content-Encoding", "X-Content-Type-Options"} {
		hd.Del(k)
	}
	b, err := json.Marshal(api.ErrorOut{Error: api.ErrorBody{Code: code, Message: msg, RequestID: middleware.GetReqID(e.r.Context())}})
	if err != nil {
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	writeBody(e.ResponseWriter, status, b)
}

func (e *envelopeWriter) Write(p []byte) (int, error) {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	if e.replace {
		return len(p), nil
	}
	return e.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (e *envelopeWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
