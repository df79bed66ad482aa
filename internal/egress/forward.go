package egress

// hopByHop are the headers that concern one connection, not the request:
// a proxy drops them both ways (RFC 9110 7.6.1), and Proxy-Authorization
// besides, which is for this proxy alone.
var hopByHop = map[string]bool{
	"Connection":          true,
	"Proxy-Connection":    true,
	"Keep-Alive":          true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}
