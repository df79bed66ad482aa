package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"

	goplugin "github.com/hashicorp/go-plugin"
)

// reattachEntry is one plugin in the EnvReattach JSON, the shape of
// Terraform's TF_REATTACH_PROVIDERS.
type reattachEntry struct {
	Protocol        string       `json:"protocol"`
	ProtocolVersion int          `json:"protocol_version"`
	Pid             int          `json:"pid"`
	Test            *bool        `json:"test,omitempty"` // accepted for Terraform's shape; always true here
	Addr            reattachAddr `json:"addr"`
}

type reattachAddr struct {
	Network string `json:"network"`
	String  string `json:"string"`
}

// ParseReattach reads the value of EnvReattach, as a debug-mode plugin
// prints it, into go-plugin reattach configurations by plugin name:
//
//	{"docker":{"protocol":"grpc","protocol_version":1,"pid":123,
//	           "addr":{"network":"unix","string":"/tmp/.../plugin123"}}}
//
// The surrounding single quotes of the printed shell line are tolerated.
// Every configuration has Test set: the process belongs to whoever
// started it, so the host disconnects from it but never kills it. A
// debug-mode plugin serves without TLS, so leave ClientConfig.TLSConfig
// unset for it.
func ParseReattach(value string) (map[string]*goplugin.ReattachConfig, error) {
	value = strings.TrimSpace(value)
	if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
		value = value[1 : len(value)-1]
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	var entries map[string]reattachEntry
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("not a JSON object of plugin name to reattach configuration: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON object")
	}
	if len(entries) == 0 {
		return nil, errors.New("names no plugin")
	}
	out := make(map[string]*goplugin.ReattachConfig, len(entries))
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		rc, err := entries[name].config()
		if err != nil {
			return nil, fmt.Errorf("plugin %q: %w", name, err)
		}
		if name == "" {
			return nil, errors.New("empty plugin name")
		}
		out[name] = rc
	}
	return out, nil
}

func (e reattachEntry) config() (*goplugin.ReattachConfig, error) {
	if e.Protocol != string(goplugin.ProtocolGRPC) {
		return nil, fmt.Errorf("protocol %q: only %q is supported", e.Protocol, goplugin.ProtocolGRPC)
	}
	if e.ProtocolVersion != ProtocolVersion {
		return nil, fmt.Errorf("protocol_version %d: this host speaks %d", e.ProtocolVersion, ProtocolVersion)
	}
	if e.Pid <= 0 {
		return nil, fmt.Errorf("pid %d: want the plugin's process ID", e.Pid)
	}
	if e.Addr.String == "" {
		return nil, errors.New(`addr.string: empty; want the plugin's socket path or host:port`)
	}
	var addr net.Addr
	switch e.Addr.Network {
	case "unix":
		addr = &net.UnixAddr{Net: "unix", Name: e.Addr.String}
	case "tcp":
		a, err := net.ResolveTCPAddr("tcp", e.Addr.String)
		if err != nil {
			return nil, fmt.Errorf("addr.string: %w", err)
		}
		addr = a
	default:
		return nil, fmt.Errorf(`addr.network %q: want "unix" or "tcp"`, e.Addr.Network)
	}
	return &goplugin.ReattachConfig{
		Protocol:        goplugin.ProtocolGRPC,
		ProtocolVersion: e.ProtocolVersion,
		Addr:            addr,
		Pid:             e.Pid,
		Test:            true,
	}, nil
}

// reattachLine is the shell line a debug-mode plugin prints.
func reattachLine(name string, rc *goplugin.ReattachConfig) (string, error) {
	entry := reattachEntry{
		Protocol:        string(rc.Protocol),
		ProtocolVersion: rc.ProtocolVersion,
		Pid:             rc.Pid,
		Addr:            reattachAddr{Network: rc.Addr.Network(), String: rc.Addr.String()},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]reattachEntry{name: entry}); err != nil {
		return "", err
	}
	value := strings.TrimSuffix(buf.String(), "\n")
	// Single-quoted for a POSIX shell; a quote inside is closed, escaped
	// and reopened.
	return EnvReattach + "='" + strings.ReplaceAll(value, "'", `'\''`) + "'", nil
}
