package resident

import (
	"fmt"
	"os"
	"sync"
)

var (
	selfMu   sync.Mutex
	selfPath string // set by UseExecutable; "" = os.Executable
	selfImg  *Image
	selfErr  error
)

// SelfImage is the running plugin's own executable as a resident image
// (it runs as the resident when started with Flag), checked and hashed
// once per process.
func SelfImage() (Image, error) {
	selfMu.Lock()
	defer selfMu.Unlock()
	if selfImg == nil && selfErr == nil {
		path := selfPath
		if path == "" {
			p, err := os.Executable()
			if err != nil {
				selfErr = fmt.Errorf("find the plugin's executable: %w", err)
				return Image{}, selfErr
			}
			path = p
		}
		img, err := InspectImage(path)
		if err != nil {
			selfErr = err
			return Image{}, err
		}
		selfImg = &img
	}
	if selfErr != nil {
		return Image{}, selfErr
	}
	return *selfImg, nil
}

// UseExecutable makes SelfImage use path instead of the running
// executable: for tests, whose binaries (built with the race detector)
// are not static. It must be called before the first SelfImage.
func UseExecutable(path string) {
	selfMu.Lock()
	defer selfMu.Unlock()
	selfPath, selfImg, selfErr = path, nil, nil
}
