package discovery

import (
	"reflect"
	"testing"
)

func TestSearchDirsDefaults(t *testing.T) {
	env := Env{
		PluginPath:  "/opt/a::relative/b:/opt/a/:",
		XDGDataHome: "/xdg",
		Home:        "/home/u",
		WorkDir:     "/work",
		ExeDir:      "/usr/local/bin",
	}
	want := []string{
		"/opt/a",
		"/work/relative/b",
		"/work/.promptkit/plugins",
		"/xdg/promptkit/plugins",
		"/usr/local/bin",
		"/usr/local/bin/plugins",
	}
	if got := SearchDirs(nil, env); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestSearchDirsXDGFallback(t *testing.T) {
	for _, xdg := range []string{"", "relative/xdg"} { // the XDG spec says to ignore relative values
		env := Env{XDGDataHome: xdg, Home: "/home/u", WorkDir: "/work", ExeDir: "/bin"}
		want := []string{"/work/.promptkit/plugins", "/home/u/.local/share/promptkit/plugins", "/bin", "/bin/plugins"}
		if got := SearchDirs(nil, env); !reflect.DeepEqual(got, want) {
			t.Errorf("XDG_DATA_HOME=%q: got %q, want %q", xdg, got, want)
		}
	}
}

func TestSearchDirsNoHome(t *testing.T) {
	got := SearchDirs(nil, Env{WorkDir: "/work"})
	if want := []string{"/work/.promptkit/plugins"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSearchDirsDuplicatesSearchedOnce(t *testing.T) {
	// The executable lives in the working directory's plugin dir.
	env := Env{PluginPath: "/work/.promptkit/plugins", WorkDir: "/work", ExeDir: "/work/.promptkit/plugins/../plugins"}
	want := []string{"/work/.promptkit/plugins", "/work/.promptkit/plugins/plugins"}
	if got := SearchDirs(nil, env); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSearchDirsExplicitReplaceDefaults(t *testing.T) {
	env := Env{PluginPath: "/opt/a", XDGDataHome: "/xdg", Home: "/home/u", WorkDir: "/work", ExeDir: "/bin"}
	got := SearchDirs([]string{"plugins", "/abs/dir/", "", "./plugins"}, env)
	if want := []string{"/work/plugins", "/abs/dir"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEnvFromOS(t *testing.T) {
	t.Setenv(EnvPluginPath, "/x:/y")
	t.Setenv("XDG_DATA_HOME", "/xdg")
	env, err := EnvFromOS()
	if err != nil {
		t.Fatal(err)
	}
	if env.PluginPath != "/x:/y" || env.XDGDataHome != "/xdg" || env.WorkDir == "" || env.ExeDir == "" {
		t.Errorf("EnvFromOS() = %+v", env)
	}
}
