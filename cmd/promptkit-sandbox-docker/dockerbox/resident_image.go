package dockerbox

import (
	"fmt"
	"os"
	"sync"

	"github.com/altairalabs/promptkit-sandbox/shared/resident"
)

// residentBinary is the file installed in containers as the resident: the
// plugin's own executable, which runs as the resident when started with
// resident.Flag. Tests, whose binary is not static, point it at a static
// build of the plugin.
var residentBinary = os.Executable

var (
	residentOnce sync.Once
	residentImg  resident.Image
	residentErr  error
)

// loadResidentImage checks and hashes the resident's file, once.
func loadResidentImage() (resident.Image, error) {
	residentOnce.Do(func() {
		path, err := residentBinary()
		if err != nil {
			residentErr = fmt.Errorf("find the plugin's executable: %w", err)
			return
		}
		residentImg, residentErr = resident.InspectImage(path)
	})
	return residentImg, residentErr
}
