"""Drives `agentlog mcp` with the official Python MCP SDK (the `mcp`
package), for crates/cli/tests/mcp.rs.

    client.py stdio AGENTLOG [ARG...]   start the server, speak over its stdio
    client.py http URL [TOKEN]          speak streamable HTTP to URL

Reads a JSON list of calls ({"tool": NAME, "arguments": {...}}) on standard
input; prints one JSON object: the tools listed (name, description, input
schema) and, per call, either the result (is_error and its text) or the
protocol error (code and message).
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


async def drive(session, calls):
    await session.initialize()
    listed = await session.list_tools()
    out = {
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in listed.tools
        ],
        "calls": [],
    }
    for c in calls:
        try:
            r = await session.call_tool(c["tool"], c.get("arguments"))
            text = "".join(getattr(b, "text", "") for b in r.content)
            out["calls"].append({"is_error": bool(r.is_error), "text": text})
        except MCPError as e:
            out["calls"].append({"protocol_error": {"code": e.error.code, "message": e.error.message}})
    return out


async def main():
    mode = sys.argv[1]
    calls = json.load(sys.stdin)
    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=None)
        async with stdio_client(params) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                out = await drive(session, calls)
    else:
        url = sys.argv[2]
        headers = {"Authorization": f"Bearer {sys.argv[3]}"} if len(sys.argv) > 3 else None
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    out = await drive(session, calls)
    json.dump(out, sys.stdout)


asyncio.run(main())
