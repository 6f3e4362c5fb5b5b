"""The MCP Python SDK client talking to ``review_server.py`` through ``GuardedSession``
(runs offline: the server is started as a subprocess over stdio).

    python mcp_client.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from jsongate.mcp import GuardedSession

SERVER = Path(__file__).with_name("review_server.py")


async def main() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            guarded = GuardedSession(session)
            tools = await guarded.list_tools()
            print("offered:", sorted(t.name for t in tools.tools))
            for name, args in [
                ("review_status", {"change_id": "c-42"}),
                ("review_status", {"change_id": "c-43"}),
                ("count_items", {"kind": "broken"}),
                ("repeat", {"text": "ab", "times": 9}),
                ("helpful_tool", {"query": "x"}),
            ]:
                result = await guarded.call_tool(name, args)
                print(f"{name}{args}: isError={bool(result.is_error)} {result.content[0].text}")


if __name__ == "__main__":
    asyncio.run(main())
