package sandbox

import (
	"strings"
	"testing"
	"time"
)

type testConfig struct {
	Timeout Duration `json:"timeout"`
	Limit   int      `json:"output_limit"`
	Clean   bool     `json:"clean_env"`
	Mounts  []string `json:"mounts"`
}

func TestDecodeConfig(t *testing.T) {
	var c testConfig
	err := DecodeConfig(map[string]any{
		"timeout": "1.5s", "output_limit": 1024, "clean_env": true, "mounts": []any{"a:b"},
	}, &c)
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Timeout) != 1500*time.Millisecond || c.Limit != 1024 || !c.Clean || c.Mounts[0] != "a:b" {
		t.Fatalf("decoded %+v", c)
	}
	c = testConfig{}
	if err := DecodeConfig(map[string]any{"timeout": 250}, &c); err != nil || time.Duration(c.Timeout) != 250*time.Millisecond {
		t.Fatalf("milliseconds: %v %v", err, c.Timeout)
	}
	if err := DecodeConfig(nil, &c); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"imgae": "x"}, `config: unknown key "imgae"`},
		{map[string]any{"output_limit": "big"}, `config: key "output_limit": expected an integer, got string`},
		{map[string]any{"mounts": "a:b"}, `config: key "mounts": expected a list, got string`},
		{map[string]any{"clean_env": "yes"}, `config: key "clean_env": expected true or false, got string`},
		{map[string]any{"timeout": "soon"}, `config: key "timeout": invalid duration "soon" (want e.g. "500ms", "2s")`},
		{map[string]any{"timeout": -5}, `config: key "timeout": invalid duration -5: negative`},
	}
	for _, tc := range cases {
		var c testConfig
		err := DecodeConfig(tc.cfg, &c)
		if err == nil || err.Error() != tc.want {
			t.Errorf("DecodeConfig(%v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestConfigKeys(t *testing.T) {
	type common struct {
		Env     []string  `json:"env"`
		Timeout *Duration `json:"timeout,omitempty"`
	}
	type cfg struct {
		Image string `json:"image"`
		common
		Hidden string `json:"-"`
		Plain  int
		secret int
	}
	_ = cfg{}.secret
	got := strings.Join(ConfigKeys(&cfg{}), " ")
	if want := "image env timeout Plain"; got != want {
		t.Fatalf("ConfigKeys = %q, want %q", got, want)
	}
}
