package handlers

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/recsys-engine/recsys/api"
)

// Hosts decides which Host headers the server answers. It defends against
// DNS rebinding: a web page on a name its owner points at 127.0.0.1 talks
// to this server as its own origin, and reads the answers, unless the
// server refuses a Host it does not know.
type Hosts struct {
	// Check turns the check on. main sets it for a server with no keys on
	// loopback (where the routes are open to any local client) and whenever
	// Allowed is given. The zero value answers every Host, as the handler
	// tests' requests (Host example.com) need.
	Check bool
	// Allowed are names or addresses answered besides loopback ones
	// (127.0.0.0/8, ::1, localhost, *.localhost): --allowed-hosts.
	Allowed []string
}

// HostName is the name of a Host header value, as Hosts.Allowed holds
// names: without the port or an IPv6 address's brackets, in lower case,
// without a final dot.
func HostName(hostport string) string {
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	} else if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		name = name[1 : len(name)-1]
	}
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

// isLoopbackName reports whether name (a HostName) can only mean this
// machine: a loopback address, localhost, or a name under .localhost,
// which browsers resolve to loopback themselves (RFC 6761 §6.3).
func isLoopbackName(name string) bool {
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

// isProbe tells the health probes, which a load balancer sends with the
// address it knows the server by: the Host check never refuses them.
func isProbe(r *http.Request) bool {
	return r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
}

// checkHost refuses a request whose Host is neither a loopback name nor
// listed in --allowed-hosts, when Hosts.Check is on. 403 rather than 421
// Misdirected Request: the request did reach the server it named, which
// declines it on purpose, and HTTP/2 clients take a 421 as a cue to retry
// on another connection.
func (h *handler) checkHost(r *http.Request) error {
	if !h.Hosts.Check || isProbe(r) {
		return nil
	}
	name := HostName(r.Host)
	if isLoopbackName(name) || slices.Contains(h.Hosts.Allowed, name) {
		return nil
	}
	if r.Host == "" {
		return api.Errorf(api.CodeForbidden, "the request has no Host header; this server answers only requests that name it "+
			"by a loopback name or address, or by a name listed in --allowed-hosts (RECSYS_ALLOWED_HOSTS)")
	}
	return api.Errorf(api.CodeForbidden, "Host %q is not a name of this server: it answers a loopback name or address "+
		"(localhost, 127.0.0.1, [::1]) or a name listed in --allowed-hosts (RECSYS_ALLOWED_HOSTS); "+
		"start it with --allowed-hosts %s to accept this one", r.Host, name)
}

// open reports whether the server has no keys, so that a request needs no
// credentials and a browser's cross-site request would be acted on.
func (h *handler) open() bool { return h.Keys.App == "" && h.Keys.Admin == "" }

// corsSafelisted are the media types a web page may send to any site with
// no CORS preflight (Fetch standard, "CORS-safelisted request-header"):
// the types of an HTML form and of text.
var corsSafelisted = []string{"application/x-www-form-urlencoded", "multipart/form-data", "text/plain"}

// checkCrossSite refuses, on a server with no keys, a state-changing
// request that a web page on another site can make a browser send without
// a CORS preflight: one the browser marks as cross-site (Sec-Fetch-Site)
// or whose Origin is not the Host (http.CrossOriginProtection), and one
// whose body is a form or text (or has no Content-Type), which browsers
// too old to send either header also send cross-site. Same-origin pages
// (the dashboard sends JSON) and clients that are not browsers (curl, the
// SDKs) pass. With a key configured every route but the public reads needs
// the key in a header, which a page on another site cannot add, so the
// key is the protection and these checks stay off (a reverse proxy may
// then add CORS for an application's front end).
func (h *handler) checkCrossSite(r *http.Request) error {
	if !h.open() {
		return nil
	}
	if err := h.crossOrigin.Check(r); err != nil {
		why := fmt.Sprintf("Origin %s is not this server's (%s)", r.Header.Get("Origin"), r.Host)
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
			why = fmt.Sprintf("the browser marks it Sec-Fetch-Site: %s", site)
		}
		return api.Errorf(api.CodeForbidden, "cross-site request refused: %s; this server has no API keys, so it takes "+
			"%s requests only from its own pages and from clients that are not browsers", why, r.Method)
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	essence, _, _ := strings.Cut(ct, ";")
	essence = strings.ToLower(strings.TrimSpace(essence))
	switch {
	case slices.Contains(corsSafelisted, essence), strings.HasPrefix(essence, "text/"):
		// Any text type too: a link's ping (text/ping) is sent
		// cross-site by a click, with neither preflight nor Origin.
		return api.Errorf(api.CodeForbidden, "cross-site request refused: Content-Type %s is one any web page can make a browser "+
			"send to this server; this server has no API keys, so it takes %s bodies only as application/json", essence, r.Method)
	case ct == "" && r.ContentLength > 0:
		return api.Errorf(api.CodeForbidden, "cross-site request refused: a body without a Content-Type is one any web page can make "+
			"a browser send to this server; this server has no API keys, so it takes %s bodies only as application/json", r.Method)
	}
	return nil
}

// browserGuard applies checkHost and checkCrossSite before routing.
func (h *handler) browserGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.checkHost(r); err != nil {
			h.writeError(w, r, err)
			return
		}
		if err := h.checkCrossSite(r); err != nil {
			h.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
