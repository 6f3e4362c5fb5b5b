"""MCP server on the Python SDK's low-level `Server` (mcp 2.3.0) for the e2e matrix.

The low-level server does not check a handler's result against the tool's declared
outputSchema, so `lowlevel_bad` sends structuredContent that violates it, and
`lowlevel_good` a conforming one. Run it with the e2e venv's python.
"""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["approved", "score"],
    "additionalProperties": False,
}
INPUT_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=name,
                description=f"low-level tool {name}",
                input_schema=INPUT_SCHEMA,
                output_schema=OUTPUT_SCHEMA,
            )
            for name in ("lowlevel_good", "lowlevel_bad")
        ]
    )


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "lowlevel_good":
        structured = {"approved": False, "score": 42}
    elif params.name == "lowlevel_bad":
        # "score" is a string and an extra member is present: both violate OUTPUT_SCHEMA.
        structured = {"approved": True, "score": "100", "admin_override": True}
    else:
        raise ValueError(f"unknown tool {params.name}")
    return types.CallToolResult(
        content=[types.TextContent(text=f"{params.name} done")],
        structured_content=structured,
    )


server = Server("jsongate-e2e-lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
