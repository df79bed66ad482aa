package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/search"
	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// The BenchmarkCall benchmarks time a call to the built sandboxd, over
// MCP Streamable HTTP on loopback with the official Go client, against
// its floor: the same work done without sandboxd (rg, sh, os.WriteFile,
// go test). Each has two sub-benchmarks, sandboxd and the floor's name,
// so that -bench output pairs them; the sandboxd one also runs the floor
// once per call, untimed, interleaved with it, and reports the floor's
// time as floor-ns/op and ours over it as x-floor: a ratio measured in
// the same run, under the same load, which is what to compare (x-floor
// 1.0 is the floor itself). Issue 34 wants every row at or under the
// reference codegen sandbox: with $CODEGEN_SANDBOX_SRC set, each row
// runs it too, interleaved the same way (ref-ns/op, x-ref), and as a
// sub-benchmark of its own (see reference_bench_test.go).
//
//	go test -run '^$' -bench BenchmarkCall -count 5 ./cmd/sandboxd/
//
// The in-process benchmarks of package server (BenchmarkGrepGoroot,
// BenchmarkBashTrue...) time the server without the binary around it;
// these time what ships.

// callBenchRegex is a fixed regex with a few dozen matches in
// GOROOT/src, the tree the Grep rows search (as issue 34 did).
const callBenchRegex = `func \(\w+ \*Reader\) Read`

// benchCall is one call of a row, to sandboxd or to its floor; n is new
// for each call, for rows that need a fresh file each time.
type benchCall func(b *testing.B, n int)

// benchAgainstFloor runs the sub-benchmarks sandboxd and floorName,
// and reference when ref is not nil (see reference_bench_test.go). All
// first make one untimed call, so none pays for a cold cache (page
// cache, Go build cache) another then finds warm.
func benchAgainstFloor(b *testing.B, floorName string, ours, floor, ref benchCall) {
	n := 0
	next := func() int { n++; return n }
	b.Run("sandboxd", func(b *testing.B) {
		ours(b, next())
		floor(b, next())
		if ref != nil {
			ref(b, next())
		}
		var floorTime, refTime time.Duration
		b.ResetTimer()
		for range b.N {
			ours(b, next())
			b.StopTimer()
			start := time.Now()
			floor(b, next())
			floorTime += time.Since(start)
			if ref != nil {
				start = time.Now()
				ref(b, next())
				refTime += time.Since(start)
			}
			b.StartTimer()
		}
		b.StopTimer()
		oursNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		floorNs := float64(floorTime.Nanoseconds()) / float64(b.N)
		b.ReportMetric(floorNs, "floor-ns/op")
		b.ReportMetric(oursNs/floorNs, "x-floor")
		if ref != nil {
			refNs := float64(refTime.Nanoseconds()) / float64(b.N)
			b.ReportMetric(refNs, "ref-ns/op")
			b.ReportMetric(oursNs/refNs, "x-ref")
		}
	})
	b.Run(floorName, func(b *testing.B) {
		floor(b, next())
		b.ResetTimer()
		for range b.N {
			floor(b, next())
		}
	})
	if ref != nil {
		b.Run("reference", func(b *testing.B) {
			ref(b, next())
			b.ResetTimer()
			for range b.N {
				ref(b, next())
			}
		})
	}
}

// benchDaemon starts the built sandboxd serving dir and connects to it.
// As root, sandboxd would run the agent's commands as another user and
// grant it the workspace by ACLs (runas.go), on GOROOT too; asked to
// run them as root, it runs them as the floor runs, and changes nothing
// outside the workspace.
func benchDaemon(b *testing.B, dir string) *mcp.ClientSession {
	b.Helper()
	args := []string{"--workspace", dir}
	if os.Geteuid() == 0 {
		// Quiet: it warns of that at every start, into -bench output.
		args = append(args, "--run-as", "root", "--log-level", "error")
	}
	return startHTTP(b, args...).connect(b)
}

// runFloor runs a floor command and fails the benchmark if it fails.
func runFloor(b *testing.B, cmd *exec.Cmd) []byte {
	b.Helper()
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s: %v", cmd, err)
	}
	return out
}

func BenchmarkCallGrepContent(b *testing.B) {
	benchGrepRow(b, "content")
}

func BenchmarkCallGrepFiles(b *testing.B) {
	benchGrepRow(b, "files_with_matches")
}

// benchGrepRow times Grep in mode over GOROOT/src against rg run alone
// with the command line Grep runs for the same call.
func benchGrepRow(b *testing.B, mode string) {
	if _, err := exec.LookPath("rg"); err != nil {
		ci.Skip(b, "the Grep floor needs rg: apt-get install ripgrep")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	ws, err := workspace.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	searcher, err := search.New(ws, search.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// LineNumbers as the server defaults it.
	argv, err := searcher.RipgrepCommand(search.GrepRequest{Pattern: callBenchRegex, OutputMode: mode, LineNumbers: true})
	if err != nil {
		b.Fatal(err)
	}
	cs := benchDaemon(b, src)
	args := map[string]any{"pattern": callBenchRegex, "output_mode": mode}
	grep := func(b *testing.B, cs *mcp.ClientSession, _ int) {
		if got := callTool(b, cs, "Grep", args); !strings.Contains(got, "bufio.go") {
			b.Fatalf("Grep: %.300s", got)
		}
	}
	benchAgainstFloor(b, "rg",
		func(b *testing.B, n int) { grep(b, cs, n) },
		func(b *testing.B, _ int) {
			if got := runFloor(b, exec.Command(argv[0], argv[1:]...)); !strings.Contains(string(got), "bufio.go") {
				b.Fatalf("rg: %.300s", got)
			}
		},
		referenceCall(referenceSession(b, src), grep))
}

func BenchmarkCallBash(b *testing.B) {
	cs := benchDaemon(b, b.TempDir())
	args := map[string]any{"command": "true", "description": "does nothing"}
	benchAgainstFloor(b, "sh",
		func(b *testing.B, _ int) {
			if got := callTool(b, cs, "Bash", args); got != "" {
				b.Fatalf("Bash: %q", got)
			}
		},
		func(b *testing.B, _ int) {
			runFloor(b, exec.Command("sh", "-c", "true"))
		},
		referenceCall(referenceSession(b, b.TempDir()), func(b *testing.B, cs *mcp.ClientSession, _ int) {
			callTool(b, cs, "Bash", args)
		}))
}

// smallFile is what the Write rows write: a few lines, as a new file.
const smallFile = "package small\n\n// Answer is the answer.\nconst Answer = 42\n"

func BenchmarkCallWrite(b *testing.B) {
	cs := benchDaemon(b, b.TempDir())
	floorDir := b.TempDir()
	write := func(b *testing.B, cs *mcp.ClientSession, n int) {
		callTool(b, cs, "Write", map[string]any{"file_path": fmt.Sprintf("w%d.txt", n), "content": smallFile})
	}
	benchAgainstFloor(b, "os",
		func(b *testing.B, n int) { write(b, cs, n) },
		func(b *testing.B, n int) {
			if err := os.WriteFile(filepath.Join(floorDir, fmt.Sprintf("w%d.txt", n)), []byte(smallFile), 0o644); err != nil {
				b.Fatal(err)
			}
		},
		referenceCall(referenceSession(b, b.TempDir()), write))
}

// BenchmarkCallWriteEdit writes a new small file and edits it; its floor
// writes the file twice.
func BenchmarkCallWriteEdit(b *testing.B) {
	cs := benchDaemon(b, b.TempDir())
	floorDir := b.TempDir()
	edited := strings.Replace(smallFile, "42", "43", 1)
	writeEdit := func(b *testing.B, cs *mcp.ClientSession, n int) {
		name := fmt.Sprintf("we%d.txt", n)
		callTool(b, cs, "Write", map[string]any{"file_path": name, "content": smallFile})
		callTool(b, cs, "Edit", map[string]any{"file_path": name, "old_string": "42", "new_string": "43"})
	}
	benchAgainstFloor(b, "os",
		func(b *testing.B, n int) { writeEdit(b, cs, n) },
		func(b *testing.B, n int) {
			name := filepath.Join(floorDir, fmt.Sprintf("we%d.txt", n))
			if err := os.WriteFile(name, []byte(smallFile), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(edited), 0o644); err != nil {
				b.Fatal(err)
			}
		},
		referenceCall(referenceSession(b, b.TempDir()), writeEdit))
}

// BenchmarkCallRunTests runs the tests of a tiny Go module, one package
// with one passing test, through run_tests and with go test directly,
// with the flags run_tests gives it (internal/verify).
func BenchmarkCallRunTests(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		ci.Skip(b, "the run_tests floor needs the go command on PATH")
	}
	dir := b.TempDir()
	for name, text := range map[string]string{
		"go.mod":       "module tiny\n\ngo 1.22\n",
		"tiny.go":      "package tiny\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"tiny_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cs := benchDaemon(b, dir)
	benchAgainstFloor(b, "go",
		func(b *testing.B, _ int) {
			if got := callTool(b, cs, "run_tests", map[string]any{}); !strings.Contains(got, "1 passed") {
				b.Fatalf("run_tests: %.500s", got)
			}
		},
		func(b *testing.B, _ int) {
			cmd := exec.Command("go", "test", "-json", "-count=1", "-fullpath", "./...")
			cmd.Dir = dir
			if got := runFloor(b, cmd); !strings.Contains(string(got), `"Action":"pass","Package":"tiny","Test":"TestAdd"`) {
				b.Fatalf("go test: %.500s", got)
			}
		},
		// The same module, in a directory of the reference's own: go
		// test writes nothing into it.
		referenceCall(referenceSession(b, dir), func(b *testing.B, cs *mcp.ClientSession, _ int) {
			callTool(b, cs, "run_tests", map[string]any{})
		}))
}
