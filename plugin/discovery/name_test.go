package discovery

import (
	"errors"
	"testing"
)

func TestParseFileName(t *testing.T) {
	ok := []struct{ file, name, version string }{
		{"promptkit-sandbox-docker", "docker", "0.0.0"},
		{"promptkit-sandbox-docker_v1.2.0", "docker", "1.2.0"},
		{"promptkit-sandbox-docker_v1.2.0-rc.1", "docker", "1.2.0-rc.1"},
		{"promptkit-sandbox-my-plugin2_v10.0.3", "my-plugin2", "10.0.3"},
		{"promptkit-sandbox-k8s_v0.0.0", "k8s", "0.0.0"},
	}
	for _, tc := range ok {
		name, v, err := ParseFileName(tc.file)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if name != tc.name || v.String() != tc.version {
			t.Errorf("%s: got %s %s, want %s %s", tc.file, name, v, tc.name, tc.version)
		}
	}
}

func TestParseFileNameNotPlugin(t *testing.T) {
	for _, f := range []string{"README.md", "promptkit-sandbox", "promptkit-sandbox.lock", "sandboxd", "xpromptkit-sandbox-docker"} {
		name, v, err := ParseFileName(f)
		if !errors.Is(err, ErrNotPluginFile) || name != "" || v != nil {
			t.Errorf("%s: got (%q, %v, %v), want ErrNotPluginFile", f, name, v, err)
		}
	}
}

func TestParseFileNameNearMisses(t *testing.T) {
	const want = "; want _vMAJOR.MINOR.PATCH[-PRERELEASE]"
	cases := []struct{ file, name, err string }{
		{"promptkit-sandbox-docker_v1.x", "docker", `invalid version in file name: "_v1.x" is not a semantic version` + want},
		{"promptkit-sandbox-docker_1.2.0", "docker", `invalid version in file name: "_1.2.0" does not start with _v` + want},
		{"promptkit-sandbox-docker_v1.2", "docker", `invalid version in file name: "_v1.2" is not in canonical form` + want},
		{"promptkit-sandbox-docker_v01.2.0", "docker", `invalid version in file name: "_v01.2.0" is not in canonical form` + want},
		{"promptkit-sandbox-docker_v1.2.0.4", "docker", `invalid version in file name: "_v1.2.0.4" is not in canonical form` + want},
		{"promptkit-sandbox-docker_v1.2.0+linux", "docker", `invalid version in file name: "_v1.2.0+linux" has build metadata` + want},
		{"promptkit-sandbox-docker_v1.2.0rc1", "docker", `invalid version in file name: "_v1.2.0rc1" is not a semantic version` + want},
		{"promptkit-sandbox-docker_v", "docker", `invalid version in file name: "_v" is not a semantic version` + want},
		{"promptkit-sandbox-Docker", "Docker", `invalid plugin name "Docker": use lowercase letters, digits and '-', starting with a letter or digit`},
		{"promptkit-sandbox-docker.exe", "docker.exe", `invalid plugin name "docker.exe": use lowercase letters, digits and '-', starting with a letter or digit`},
		{"promptkit-sandbox--docker", "-docker", `invalid plugin name "-docker": use lowercase letters, digits and '-', starting with a letter or digit`},
		{"promptkit-sandbox-", "", `missing plugin name after promptkit-sandbox-`},
		{"promptkit-sandbox-_v1.0.0", "", `missing plugin name after promptkit-sandbox-`},
	}
	for _, tc := range cases {
		name, v, err := ParseFileName(tc.file)
		if err == nil || errors.Is(err, ErrNotPluginFile) {
			t.Errorf("%s: got (%q, %v, %v), want a near-miss error", tc.file, name, v, err)
			continue
		}
		if err.Error() != tc.err {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.file, err, tc.err)
		}
		if name != tc.name || v != nil {
			t.Errorf("%s: got name %q version %v, want %q and no version", tc.file, name, v, tc.name)
		}
	}
}
