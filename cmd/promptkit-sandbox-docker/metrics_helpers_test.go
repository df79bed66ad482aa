package main

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// freeLoopbackAddr is a loopback address with a port free a moment ago,
// for a listener the test's child opens.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// sampleValue is the value of the sample named series (name and
// labels, as Prometheus's text format writes them) in a scrape.
func sampleValue(scrape, series string) (float64, bool) {
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// linesWith is the lines of a scrape that hold s.
func linesWith(scrape, s string) string {
	var out []string
	for _, l := range strings.Split(scrape, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
