package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// connectMCPGo opens an MCP session to url with mcp-go's own client, the
// one PromptKit's tools are built with beside the official SDK's: over
// Streamable HTTP it posts to url as it is; over SSE url is the stream's.
func connectMCPGo(t testing.TB, url string, tr transport) *mcpclient.Client {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	var c *mcpclient.Client
	var err error
	if tr == sse {
		c, err = mcpclient.NewSSEMCPClient(url, mcptransport.WithHeaders(auth))
	} else {
		c, err = mcpclient.NewStreamableHttpClient(url, mcptransport.WithHTTPHeaders(auth))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The SSE stream lives on the context Start is given.
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start over %s: %v", tr, err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = mcpgo.ProtocolVersion20251125
	init.Params.ClientInfo = mcpgo.Implementation{Name: "sandboxd-test", Version: "0"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		t.Fatalf("initialize over %s: %v", tr, err)
	}
	return c
}

// callMCPGo calls a tool with an mcp-go client: its text and whether it
// is an error, or the call's own failure.
func callMCPGo(ctx context.Context, c *mcpclient.Client, tool string, args map[string]any) (result, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return result{}, err
	}
	return resultOf(res), nil
}

func resultOf(res *mcpgo.CallToolResult) result {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return result{Text: b.String(), IsError: res.IsError}
}

// callRaw sends tools/call under a request ID of the test's choosing,
// through c's transport, so that a notifications/cancelled can name it.
func callRaw(ctx context.Context, c *mcpclient.Client, id int64, tool string, args map[string]any) (result, error) {
	resp, err := c.GetTransport().SendRequest(ctx, mcptransport.JSONRPCRequest{
		JSONRPC: mcpgo.JSONRPC_VERSION,
		ID:      mcpgo.NewRequestId(id),
		Method:  string(mcpgo.MethodToolsCall),
		Params:  map[string]any{"name": tool, "arguments": args},
	})
	if err != nil {
		return result{}, err
	}
	if resp.Error != nil {
		return result{}, resp.Error.AsError()
	}
	var res mcpgo.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return result{}, err
	}
	return resultOf(&res), nil
}

// cancelRaw sends notifications/cancelled for request id.
func cancelRaw(t testing.TB, c *mcpclient.Client, id int64) {
	t.Helper()
	err := c.GetTransport().SendNotification(context.Background(), mcpgo.JSONRPCNotification{
		JSONRPC: mcpgo.JSONRPC_VERSION,
		Notification: mcpgo.Notification{
			Method: string(mcpgo.MethodNotificationCancelled),
			Params: mcpgo.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": "the test gave up"}},
		},
	})
	if err != nil {
		t.Fatalf("notifications/cancelled: %v", err)
	}
}
