// Package scrapetest scrapes an HTTP endpoint in tests as Prometheus
// would: a metrics listener the test started, or one a provider forwards.
package scrapetest

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Timeout bounds one scrape.
const Timeout = 10 * time.Second

// Get returns the body of a GET of url; anything but a 200 within
// Timeout fails the test.
func Get(t testing.TB, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v: %.512s", url, resp.Status, err, b)
	}
	return string(b)
}

// Value is the value of the sample named series (its name and labels as
// Prometheus's text format writes them, `name{a="x",b="y"}`) in a
// scrape; false when the scrape has none.
func Value(scrape, series string) (float64, bool) {
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// Lines is the lines of a scrape that hold s, for a failure's message.
func Lines(scrape, s string) string {
	var out []string
	for _, l := range strings.Split(scrape, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
