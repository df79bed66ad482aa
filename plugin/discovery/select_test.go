package discovery

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// selectFixture installs docker 1.1.0, 1.2.0, 1.2.9, 1.3.0, 2.0.0-rc.1 and
// a refused 1.4.0 across two directories, plus kubectl 0.5.0.
func selectFixture(t *testing.T) (*Result, string) {
	t.Helper()
	root := t.TempDir()
	mkdir(t, root+"/a", 0o755)
	mkdir(t, root+"/b", 0o755)
	for _, f := range []string{
		"/a/promptkit-sandbox-docker_v1.2.0",
		"/a/promptkit-sandbox-docker_v1.3.0",
		"/b/promptkit-sandbox-docker_v1.1.0",
		"/b/promptkit-sandbox-docker_v1.2.9",
		"/b/promptkit-sandbox-docker_v2.0.0-rc.1",
		"/b/promptkit-sandbox-kubectl_v0.5.0",
	} {
		writeFile(t, root+f, 0o755)
	}
	writeFile(t, root+"/b/promptkit-sandbox-docker_v1.4.0", 0o775)
	r, err := Scan([]string{root + "/a", root + "/b", root + "/missing"})
	if err != nil {
		t.Fatal(err)
	}
	return r, root
}

func TestSelect(t *testing.T) {
	r, root := selectFixture(t)
	cases := []struct{ name, constraint, want string }{
		// go-version's "~>" bumps the last segment given: "~> 1.2.0" is
		// ">= 1.2.0, < 1.3.0", while "~> 1.2" is ">= 1.2, < 2.0".
		{"docker", "~> 1.2.0", "docker 1.2.9 ($R/b/promptkit-sandbox-docker_v1.2.9)"},
		{"docker", "~> 1.2", "docker 1.3.0 ($R/a/promptkit-sandbox-docker_v1.3.0)"},
		{"docker", ">= 1.0, < 2.0", "docker 1.3.0 ($R/a/promptkit-sandbox-docker_v1.3.0)"},
		{"docker", "< 1.2", "docker 1.1.0 ($R/b/promptkit-sandbox-docker_v1.1.0)"},
		{"docker", "1.2.0", "docker 1.2.0 ($R/a/promptkit-sandbox-docker_v1.2.0)"},
		// Constraints without a prerelease never match one...
		{"docker", ">= 1.0", "docker 1.3.0 ($R/a/promptkit-sandbox-docker_v1.3.0)"},
		// ...but no constraint at all takes the newest installed.
		{"docker", "", "docker 2.0.0-rc.1 ($R/b/promptkit-sandbox-docker_v2.0.0-rc.1)"},
		{"docker", "  ", "docker 2.0.0-rc.1 ($R/b/promptkit-sandbox-docker_v2.0.0-rc.1)"},
		{"docker", ">= 2.0.0-rc.1", "docker 2.0.0-rc.1 ($R/b/promptkit-sandbox-docker_v2.0.0-rc.1)"},
		{"kubectl", "", "kubectl 0.5.0 ($R/b/promptkit-sandbox-kubectl_v0.5.0)"},
		// Any plugin, when only one has a matching version.
		{"", "~> 0.5", "kubectl 0.5.0 ($R/b/promptkit-sandbox-kubectl_v0.5.0)"},
		{"", "~> 1.2.0", "docker 1.2.9 ($R/b/promptkit-sandbox-docker_v1.2.9)"},
	}
	for _, tc := range cases {
		c, err := r.Select(tc.name, tc.constraint)
		if err != nil {
			t.Errorf("Select(%q, %q): %v", tc.name, tc.constraint, err)
			continue
		}
		if got := strings.ReplaceAll(c.String(), root, "$R"); got != tc.want {
			t.Errorf("Select(%q, %q) = %s, want %s", tc.name, tc.constraint, got, tc.want)
		}
	}
}

func TestSelectNotFound(t *testing.T) {
	r, root := selectFixture(t)
	_, err := r.Select("docker", "~> 3.0")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("got %v, want *NotFoundError", err)
	}
	want := &NotFoundError{
		Name:       "docker",
		Constraint: "~> 3.0",
		Dirs:       []string{root + "/a", root + "/b", root + "/missing"},
		Available:  []string{"2.0.0-rc.1", "1.3.0", "1.2.9", "1.2.0", "1.1.0"},
		Refused:    []string{"docker 1.4.0 (" + root + "/b/promptkit-sandbox-docker_v1.4.0): file is writable by group or others (mode -rwxrwxr-x)"},
	}
	if !reflect.DeepEqual(nf, want) {
		t.Errorf("got  %#v\nwant %#v", nf, want)
	}
	wantMsg := `no usable plugin "docker" matching "~> 3.0"; available: 2.0.0-rc.1, 1.3.0, 1.2.9, 1.2.0, 1.1.0; ` +
		`refused: docker 1.4.0 ($R/b/promptkit-sandbox-docker_v1.4.0): file is writable by group or others (mode -rwxrwxr-x); ` +
		`searched: $R/a, $R/b, $R/missing`
	if got := strings.ReplaceAll(err.Error(), root, "$R"); got != wantMsg {
		t.Errorf("message:\ngot  %s\nwant %s", got, wantMsg)
	}
}

func TestSelectUnknownPlugin(t *testing.T) {
	r, root := selectFixture(t)
	_, err := r.Select("podman", "")
	want := `no usable plugin "podman"; searched: $R/a, $R/b, $R/missing`
	if err == nil || strings.ReplaceAll(err.Error(), root, "$R") != want {
		t.Errorf("got %v, want %s", err, want)
	}
	empty, err := Scan(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = empty.Select("docker", "~> 1.0")
	if want := `no usable plugin "docker" matching "~> 1.0"; no directories were searched`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestSelectAnyPluginIsAmbiguous(t *testing.T) {
	r, root := selectFixture(t)
	_, err := r.Select("", "")
	want := "more than one plugin matches: docker 2.0.0-rc.1 ($R/b/promptkit-sandbox-docker_v2.0.0-rc.1), " +
		"kubectl 0.5.0 ($R/b/promptkit-sandbox-kubectl_v0.5.0); name the plugin"
	if err == nil || strings.ReplaceAll(err.Error(), root, "$R") != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	var nf *NotFoundError
	_, err = r.Select("", "~> 7.0")
	if !errors.As(err, &nf) || !reflect.DeepEqual(nf.Available, []string{"docker 2.0.0-rc.1", "docker 1.3.0", "docker 1.2.9", "docker 1.2.0", "docker 1.1.0", "kubectl 0.5.0"}) {
		t.Errorf("got %#v", err)
	}
}

func TestSelectBadConstraint(t *testing.T) {
	r, _ := selectFixture(t)
	for _, tc := range []struct{ constraint, want string }{
		{"~> one", `invalid version constraint "~> one": malformed constraint: ~> one (want e.g. "~> 1.2" or ">= 1.0, < 2.0")`},
		{">= 1.0,", `invalid version constraint ">= 1.0,": malformed constraint:  (want e.g. "~> 1.2" or ">= 1.0, < 2.0")`},
		{"=> 1.0", `invalid version constraint "=> 1.0": malformed constraint: => 1.0 (want e.g. "~> 1.2" or ">= 1.0, < 2.0")`},
	} {
		_, err := r.Select("docker", tc.constraint)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Select(docker, %q):\ngot  %v\nwant %s", tc.constraint, err, tc.want)
		}
		var nf *NotFoundError
		if errors.As(err, &nf) {
			t.Errorf("a bad constraint is not a NotFoundError")
		}
		if _, perr := ParseConstraint(tc.constraint); perr == nil || perr.Error() != tc.want {
			t.Errorf("ParseConstraint(%q) = %v", tc.constraint, perr)
		}
	}
}

func TestParseConstraintEmptyAcceptsEverything(t *testing.T) {
	c, err := ParseConstraint("")
	if err != nil || c != nil {
		t.Fatalf("ParseConstraint(\"\") = %v, %v; want nil, nil", c, err)
	}
	if !c.Check(DevVersion()) {
		t.Error("nil constraints must accept 0.0.0")
	}
}

func TestSelectHandBuiltResultDoesNotPanic(t *testing.T) {
	r := &Result{Candidates: []Candidate{{Name: "x", Path: "/x"}}}
	if _, err := r.Select("x", "~> 1.0"); err == nil {
		t.Error("a candidate without a version was selected")
	}
	if got := r.Usable("x"); len(got) != 1 {
		t.Errorf("Usable = %v", got)
	}
}
