// Package arena provisions promptkit-sandbox's codegen sandboxes for
// PromptArena: it implements PromptArena's mcpsource.MCPSource, so an
// arena config's MCP server entry gets, per run, scenario or session, a
// sandboxd MCP endpoint in a container or a pod of its own, as a
// RuntimeConfig declares it.
//
// Its register package registers it under Name; a program running
// PromptArena's engine imports that package for its side effect:
//
//	import _ "github.com/altairalabs/promptkit-sandbox/promptkit/arena/register"
//
// and the arena config says:
//
//	mcp_servers:
//	  - name: sandbox
//	    source: promptkit-sandbox
//	    scope: session
//	    source_args:
//	      config: runtime.yaml            # the RuntimeConfig; relative to the working directory
//	      sandbox: code                   # a docker_codegen or kubectl_codegen sandbox in it
//	      workspace: "{{scenario.workspace}}"
//
// See ParseArgs for every key. The module is separate from the adapter
// (package promptkit) so that a PromptKit program that does not run
// PromptArena never pulls in PromptArena's dependencies.
package arena
