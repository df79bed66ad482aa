package guard

import (
	"errors"
	"strings"
	"testing"
)

func TestRefused(t *testing.T) {
	for cmd, name := range map[string]string{
		"sudo id":                              "sudo",
		"`sudo` id":                            "sudo",
		"$(sudo id)":                           "sudo",
		"echo $(sudo cat /etc/shadow)":         "sudo",
		"/usr/bin/sudo id":                     "sudo",
		"FOO=1 sudo id":                        "sudo",
		"'sudo' id":                            "sudo",
		`"/usr/bin/"'sudo' id`:                 "sudo",
		"env FOO=1 sudo id":                    "sudo",
		"env -i sudo id":                       "sudo",
		"nohup sudo reboot &":                  "sudo",
		"timeout 5 sudo id":                    "sudo",
		"nice -n 10 su root":                   "su",
		"ls && sudo rm x":                      "sudo",
		"true || (cd / && shutdown -h now)":    "shutdown",
		"echo hi | xargs sudo rm":              "sudo",
		"for i in 1; do reboot; done":          "reboot",
		"f() { mount /dev/sda1 /mnt; }; f":     "mount",
		"mkfs.ext4 /dev/sdb":                   "mkfs.ext4",
		"if true; then poweroff; fi":           "poweroff",
		"rm -rf /":                             "rm -r /",
		"rm -fr /*":                            "rm -r /*",
		"rm --recursive --force ~":             "rm -r ~",
		"rm -rf $HOME":                         "rm -r $HOME",
		"rm -r --no-preserve-root /tmp/x":      "rm --no-preserve-root",
		"kill -9 -1":                           "kill -1",
		"bash -c 'x'; command sudo ls":         "sudo",
		"exec su -":                            "su",
		"cat <<EOF\nhi\nEOF\nsystemctl stop x": "systemctl",
	} {
		err := Check(cmd)
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("%q: not refused (%v)", cmd, err)
			continue
		}
		if r.Name != name {
			t.Errorf("%q: refused as %q, want %q", cmd, r.Name, name)
		}
		if !strings.Contains(err.Error(), "not the security boundary") || !strings.Contains(err.Error(), r.Reason) {
			t.Errorf("%q: message %q does not say why", cmd, err)
		}
	}
}

func TestAllowed(t *testing.T) {
	for _, cmd := range []string{
		`git commit -m "fix mount bug"`,
		"grep -rn mount .",
		"grep -rn sudo docs/",
		"echo sudo",
		"echo 'reboot the service'",
		"# sudo in a comment\nls",
		"go test ./... 2>&1 | tail -5",
		"cat sudoers.md",
		"man mount",
		"rm -rf ./build /tmp/cache",
		"rm -f /tmp/x",
		"kill -9 1234",
		"kill %1",
		"make test",
		"./scripts/mount-check.sh",
		"sudoku-solver --help",
		"x=$(printf 'sud'); echo $x",
		"sleep 60 & echo hi",
		"",
	} {
		if err := Check(cmd); err != nil {
			t.Errorf("%q: %v", cmd, err)
		}
	}
}

func TestUnparsable(t *testing.T) {
	err := Check("echo 'unterminated")
	var r *Refusal
	if err == nil || errors.As(err, &r) || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("err = %v", err)
	}
}
