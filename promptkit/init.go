package promptkit

import "github.com/altairalabs/promptkit-sandbox/shared/supervisor"

// Init lets the hooks this process runs itself (sandboxes of mode direct,
// with Options.ReplaceDirect) be contained as promptkit-sandbox's own
// programs contain them: in a cgroup of their own or under a supervisor,
// both starts of this program's binary, so that nothing a hook starts
// outlives its call or this process. Call it first thing in main:
//
//	func main() {
//		promptkit.Init()
//		...
//	}
//
// In a process started as a supervisor or a cgroup keeper, Init does
// that work and exits: it never returns. In any other it returns at
// once. A program that does not call it is never started so, and its
// direct hooks are contained by their process group alone (the first
// one logs a warning saying so): whatever leaves the group survives the
// call. Hooks in containers and pods need no Init.
func Init() { supervisor.Init() }
