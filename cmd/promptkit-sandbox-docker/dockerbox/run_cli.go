package dockerbox

import (
	"errors"
)

// newCLIRunner runs docker_run containers with the docker CLI.
func newCLIRunner(name string, set *runSettings) (runner, error) {
	return nil, errors.New("not implemented")
}
