package dockertest

// The patterns the flood hook repeats (see hooks/flood); different per
// stream, so a test can tell the streams apart.
const (
	floodStdoutPattern = "0123456789abcdef"
	floodStderrPattern = "FEDCBA9876543210"
)

// FloodStdout returns the n bytes `/hooks/flood n` writes to stdout.
func FloodStdout(n int) []byte { return repeatTo(floodStdoutPattern, n) }

// FloodStderr returns the n bytes `/hooks/flood 0 n` writes to stderr.
func FloodStderr(n int) []byte { return repeatTo(floodStderrPattern, n) }

func repeatTo(pattern string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = pattern[i%len(pattern)]
	}
	return b
}
