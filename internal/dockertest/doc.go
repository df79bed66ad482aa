// Package dockertest gives tests a Docker engine and the images they run.
//
// No image registry is reachable from our machines, so every test image is
// built locally FROM scratch out of static binaries: Debian's busybox-static
// and the Go test hooks under hooks/. Images are tagged by a hash of what
// goes into them, which makes the engine's image store the cache: a second
// test, a second test binary or `make images` reuses what was built.
//
// Tests that need the engine call Require (or Image, which calls it); they
// skip when there is no engine, except under CI, where they fail, and they
// always skip under go test -short (make unit). A typical test:
//
//	image := dockertest.Image(t, dockertest.Hooks)
//	label := dockertest.UniqueLabel(t) // its containers go when the test ends
//	out := dockertest.Docker(t, "run", "--rm", "--network", "none",
//		"--label", label, image, "/hooks/exitcode", "0")
//	...
//	dockertest.AssertNoContainers(t, label)
package dockertest
