package plugin

import (
	"net"
	"reflect"
	"strings"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
)

func TestParseReattach(t *testing.T) {
	got, err := ParseReattach(`{"docker":{"protocol":"grpc","protocol_version":1,"pid":123,"addr":{"network":"unix","string":"/tmp/x/plugin1"}},
		"k8s":{"protocol":"grpc","protocol_version":1,"pid":7,"test":true,"addr":{"network":"tcp","string":"127.0.0.1:4000"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*goplugin.ReattachConfig{
		"docker": {Protocol: goplugin.ProtocolGRPC, ProtocolVersion: 1, Pid: 123, Test: true, Addr: &net.UnixAddr{Net: "unix", Name: "/tmp/x/plugin1"}},
		"k8s":    {Protocol: goplugin.ProtocolGRPC, ProtocolVersion: 1, Pid: 7, Test: true, Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4000}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d plugins", len(got))
	}
	for name, w := range want {
		g := got[name]
		if g == nil || g.Protocol != w.Protocol || g.ProtocolVersion != w.ProtocolVersion || g.Pid != w.Pid || g.Test != w.Test ||
			g.Addr.Network() != w.Addr.Network() || g.Addr.String() != w.Addr.String() {
			t.Errorf("%s: got %+v, want %+v", name, g, w)
		}
	}
}

// What a debug-mode plugin prints parses back, quotes in paths included.
func TestReattachLineRoundTrip(t *testing.T) {
	rc := &goplugin.ReattachConfig{Protocol: goplugin.ProtocolGRPC, ProtocolVersion: 1, Pid: 42,
		Addr: &net.UnixAddr{Net: "unix", Name: `/tmp/it's <here>/plugin9`}}
	line, err := reattachLine("docker", rc)
	if err != nil {
		t.Fatal(err)
	}
	want := `PROMPTKIT_REATTACH_PLUGINS='{"docker":{"protocol":"grpc","protocol_version":1,"pid":42,"addr":{"network":"unix","string":"/tmp/it'\''s <here>/plugin9"}}}'`
	if line != want {
		t.Fatalf("line\n%s\nwant\n%s", line, want)
	}
	// What a shell makes of the quoting.
	value := strings.ReplaceAll(strings.TrimPrefix(line, EnvReattach+"="), `'\''`, `'`)
	got, err := ParseReattach(value)
	if err != nil {
		t.Fatal(err)
	}
	rc.Test = true
	if !reflect.DeepEqual(got["docker"], rc) {
		t.Fatalf("got %+v, want %+v", got["docker"], rc)
	}
}

func TestParseReattachErrors(t *testing.T) {
	ok := `"protocol":"grpc","protocol_version":1,"pid":1`
	addr := `"addr":{"network":"unix","string":"/s"}`
	cases := map[string]string{
		"":                                   `not a JSON object of plugin name to reattach configuration: EOF`,
		"{":                                  `not a JSON object of plugin name to reattach configuration: unexpected EOF`,
		"[]":                                 `not a JSON object of plugin name to reattach configuration: json: cannot unmarshal array into Go value of type map[string]plugin.reattachEntry`,
		"{}":                                 `names no plugin`,
		`{"a":{` + ok + `,` + addr + `}} {}`: `unexpected data after the JSON object`,
		`{"a":{` + ok + `,` + addr + `,"extra":1}}`:                             `not a JSON object of plugin name to reattach configuration: json: unknown field "extra"`,
		`{"a":{"protocol":"netrpc","protocol_version":1,"pid":1,` + addr + `}}`: `plugin "a": protocol "netrpc": only "grpc" is supported`,
		`{"a":{"protocol":"grpc","protocol_version":2,"pid":1,` + addr + `}}`:   `plugin "a": protocol_version 2: this host speaks 1`,
		`{"a":{"protocol":"grpc","protocol_version":1,` + addr + `}}`:           `plugin "a": pid 0: want the plugin's process ID`,
		`{"a":{` + ok + `}}`: `plugin "a": addr.string: empty; want the plugin's socket path or host:port`,
		`{"a":{` + ok + `,"addr":{"network":"udp","string":"x"}}}`:      `plugin "a": addr.network "udp": want "unix" or "tcp"`,
		`{"a":{` + ok + `,"addr":{"network":"tcp","string":"nohost"}}}`: `plugin "a": addr.string: address nohost: missing port in address`,
		`{"":{` + ok + `,` + addr + `}}`:                                `empty plugin name`,
	}
	for in, want := range cases {
		_, err := ParseReattach(in)
		if err == nil || err.Error() != want {
			t.Errorf("ParseReattach(%s)\n = %v\nwant %s", in, err, want)
		}
	}
}
