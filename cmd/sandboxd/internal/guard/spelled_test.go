package guard

import (
	"errors"
	"testing"
)

// TestSpellings: the denylisted commands spelled as the red team of
// issue 28 spelled them — encoded, printed into a shell, run by an
// interpreter, a makefile or git — are refused as what they run.
func TestSpellings(t *testing.T) {
	cases := []struct{ cmd, name string }{
		// ANSI-C quoting, decoded before matching.
		{`$'\x73udo' id`, "sudo"},
		{`$'\163\165\144\157' id`, "sudo"},
		{`$'\u0073udo' id`, "sudo"},
		{`$'\U00000073udo' id`, "sudo"},
		{`$'reb\x6fot'`, "reboot"},
		{`/usr/bin/$'\x73u' -`, "su"},
		// Brace expansion.
		{`{sudo,} id`, "sudo"},
		{`s{u,x}do id`, "sudo"},
		{`rm -rf /{,}`, "rm -r /"},
		// Command substitution of a literal printf or echo.
		{`$(printf sud)o id`, "sudo"},
		{"`printf sud`o id", "sudo"},
		{`$(echo sudo) id`, "sudo"},
		{`$(echo sudo id)`, "sudo"},
		{`$(printf '%s' sud)o id`, "sudo"},
		{`$(printf '\x73udo') id`, "sudo"},
		{`"$(printf reb)oot"`, "reboot"},
		{`rm -rf $(echo /)`, "rm -r /"},
		{`eval "$(printf sud)o id"`, "sudo"},
		// A script on a shell's stdin.
		{`echo sudo id | sh`, "sudo"},
		{`echo 'shutdown now' | bash -s`, "shutdown"},
		{`printf 'reboot\n' | sh -`, "reboot"},
		{`printf 'sud%s id' o | bash`, "sudo"},
		{`echo $'\x73udo id' | sh`, "sudo"},
		{`echo 'sudo id' | env bash`, "sudo"},
		{`sh <<< 'sudo id'`, "sudo"},
		{"bash <<EOF\nsudo id\nEOF", "sudo"},
		{`sh -c "$(echo sudo id)"`, "sudo"},
		// Interpreters starting a listed command.
		{`python3 -c 'import os; os.system("sudo id")'`, "sudo"},
		{`python3 -c "import subprocess; subprocess.run(['sudo', 'id'])"`, "sudo"},
		{`python -c '__import__("os").system("\x73udo id")'`, "sudo"},
		{`perl -e 'system("reboot")'`, "reboot"},
		{`perl -e 'exec "sudo", "id"'`, "sudo"},
		{"ruby -e '`shutdown -h now`'", "shutdown"},
		{`node -e 'require("child_process").execSync("sudo id")'`, "sudo"},
		{`echo 'import os; os.system("sudo id")' | python3`, "sudo"},
		{"python3 - <<EOF\nimport os\nos.system('mount /dev/sda1 /mnt')\nEOF", "mount"},
		// make.
		{`make --eval='x: ; sudo id' x`, "sudo"},
		{"printf 'x:\\n\\tsudo id\\n' | make -f - x", "sudo"},
		{"make -f - <<EOF\nx:\n\t@reboot\nEOF", "reboot"},
		{`make SHELL=/usr/bin/sudo x`, "sudo"},
		{`make --eval='X := $(shell sudo id)'`, "sudo"},
		// git running a program it was given.
		{`git -c alias.x='!sudo id' x`, "sudo"},
		{`git -c core.pager='sudo less' log`, "sudo"},
		{`git -c core.sshCommand=reboot fetch`, "reboot"},
		{`git config alias.up '!sudo id'`, "sudo"},
		{`git config --global core.editor 'sudo vi'`, "sudo"},
		{`GIT_PAGER='sudo less' git log`, "sudo"},
		{`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!sudo id' git x`, "sudo"},
	}
	for _, c := range cases {
		err := Check(c.cmd)
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("%q: not refused (%v)", c.cmd, err)
			continue
		}
		if r.Name != c.name {
			t.Errorf("%q: refused as %q, want %q", c.cmd, r.Name, c.name)
		}
	}
}

// TestSpellingsAllowed: the same tools used for ordinary work, words of
// the denylist in data they do not run, pass.
func TestSpellingsAllowed(t *testing.T) {
	for _, cmd := range []string{
		`echo $'line one\nline two'`,
		`printf '%s\n' sudo reboot`,
		`echo "$(printf 'mount point')"`,
		`x=$(printf sudo); echo "$x"`,
		`echo 'echo hello' | sh`,
		`printf 'ls\npwd\n' | bash`,
		`echo sudo | cat`,
		`echo reboot | grep -c boot`,
		`sh script.sh <<< 'sudo id'`,
		`python3 -c 'print("sudo is not installed here")'`,
		`python3 -c 'import os; os.system("ls -l")'`,
		`python3 -c 'import sys; print(sys.exec_prefix, "mount the filesystem")'`,
		`python3 -c "import json,sys; print(json.load(sys.stdin)['mount'])"`,
		`perl -ne 'print if /reboot/' log.txt`,
		`perl -pe 's/sudo/doas/g' notes.txt`,
		`node -e 'console.log("shutdown")'`,
		`python3 manage.py shutdown`,
		`make -C sub reboot-test`,
		`make --eval='x: ; echo ok' x`,
		`make SHELL=/bin/bash test`,
		`git -c alias.st=status st`,
		`git -c core.pager=less log`,
		`git config alias.co checkout`,
		`git config user.name 'Sudo Reboot'`,
		`git commit -m 'mount: handle sudo'`,
		`GIT_PAGER=cat git log`,
		`echo "$(echo hi) there"`,
		`mkdir -p src/{api,web}/{sudo,mount}`,
		`echo {reboot,halt}`,
		`cp config.{yaml,yaml.bak}`,
	} {
		if err := Check(cmd); err != nil {
			t.Errorf("%q: %v", cmd, err)
		}
	}
}
