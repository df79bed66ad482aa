// Command kubecluster brings the test cluster of package kubecluster up
// and down for people (make kube-up, make kube-down):
//
//	kubecluster deps    install the Debian packages a cluster needs (as root)
//	kubecluster build   build the binaries into the cache (first run only)
//	kubecluster up      start a cluster that outlives this command
//	kubecluster down    stop it and remove everything it made
//
// up prints the admin kubeconfig's path and a kubectl of the cluster's
// version. The state directory is kubecluster.DefaultDir(), or -dir.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
)

func main() {
	dir := flag.String("dir", kubecluster.DefaultDir(), "the cluster's state directory")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: kubecluster [-dir DIR] deps|build|up|down")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, flag.Arg(0), *dir); err != nil {
		fmt.Fprintln(os.Stderr, "kubecluster:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(ctx context.Context, cmd, dir string) error {
	switch cmd {
	case "deps":
		return kubecluster.InstallDeps(ctx, logf)
	case "build":
		start := time.Now()
		bins, err := kubecluster.EnsureBinaries(ctx, logf)
		if err != nil {
			return err
		}
		logf("binaries in %s (%s)", bins.Dir, time.Since(start).Round(time.Second))
		return nil
	case "up":
		c, err := kubecluster.Start(ctx, kubecluster.Options{Dir: dir, Log: logf, Detach: true})
		if err != nil {
			return err
		}
		fmt.Printf("export KUBECONFIG=%s\n# kubectl %s: %s\n", c.Kubeconfig, kubecluster.Version, c.Kubectl)
		return nil
	case "down":
		start := time.Now()
		if err := kubecluster.StopDir(ctx, dir, logf); err != nil {
			return err
		}
		logf("down in %s: nothing left of %s", time.Since(start).Round(10*time.Millisecond), dir)
		return nil
	}
	flag.Usage()
	os.Exit(2)
	return nil
}
