// Package register registers the promptkit-sandbox MCPSource with
// PromptArena under arena.Name ("promptkit-sandbox") when imported:
//
//	import _ "github.com/altairalabs/promptkit-sandbox/promptkit/arena/register"
//
// as PromptArena's own arena/mcpsource/docker/register does for its
// docker source. The source searches the default plugin directories and
// logs to stderr; a program that wants other options registers its own
// arena.New instead of importing this package.
package register

import (
	"github.com/AltairaLabs/promptarena/arena/mcpsource"

	"github.com/altairalabs/promptkit-sandbox/promptkit"
	"github.com/altairalabs/promptkit-sandbox/promptkit/arena"
)

// Source is the registered source. A program that runs arena's engine
// and goes on afterwards closes it to release what it still holds.
var Source = arena.New(promptkit.Options{})

func init() {
	mcpsource.RegisterMCPSource(arena.Name, Source)
}
