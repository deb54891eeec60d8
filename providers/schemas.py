"""Function-tool definitions of providers: building them, checking them, names they may not use."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from providers.errors import InvalidProvider

CORE_TOOL_NAMES = frozenset({"memory", "session_search"})


def function_tool(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    """An OpenAI function-tool definition with an object of ``properties`` as parameters."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Parameters a provider tool may not declare: who the tenant is comes from the context.
RESERVED_ARGUMENTS = frozenset(
    {"tenant", "tenant_id", "namespace", "user_id", "peer_id", "user_peer_id", "ai_peer_id"}
    | {"memory_scope_key", "workspace", "backend_key"}
)


def check_tool_schemas(provider: str, schemas: object) -> tuple[str, ...]:
    """The tool names of well-formed function tools, or InvalidProvider listing what is wrong."""
    if not isinstance(schemas, list):
        raise InvalidProvider(provider, [f"tool_schemas() returned {type(schemas).__name__}"])
    problems: list[str] = []
    names: list[str] = []
    for index, schema in enumerate(schemas):
        where = f"tool #{index}"
        function = schema.get("function") if isinstance(schema, dict) else None
        if not isinstance(schema, dict) or schema.get("type") != "function":
            problems.append(f"{where} is not a dict with type 'function'")
            continue
        if not isinstance(function, dict):
            problems.append(f"{where} has no 'function' object")
            continue
        name = function.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            problems.append(f"{where} name {name!r} does not match {TOOL_NAME.pattern}")
            continue
        names.append(name)
        if not isinstance(function.get("description", ""), str):
            problems.append(f"tool {name!r} description is not a string")
        params = function.get("parameters", {"type": "object"})
        properties = params.get("properties", {}) if isinstance(params, dict) else None
        if not isinstance(params, dict) or params.get("type") != "object":
            problems.append(f"tool {name!r} parameters are not a JSON-schema object")
        elif not isinstance(properties, dict):
            problems.append(f"tool {name!r} properties are not an object")
        else:
            reserved = sorted(RESERVED_ARGUMENTS.intersection(properties))
            if reserved:
                problems.append(
                    f"tool {name!r} declares {', '.join(reserved)}: the tenant comes from the "
                    "gateway's context, never from model arguments"
                )
        try:
            json.dumps(schema)
        except (TypeError, ValueError) as exc:
            problems.append(f"tool {name!r} is not JSON-serialisable: {exc}")
    if problems:
        raise InvalidProvider(provider, problems)
    return tuple(names)


def declared_arguments(schema: Mapping[str, Any]) -> frozenset[str]:
    """Parameter names a (checked) function tool declares."""
    params = schema["function"].get("parameters", {})
    return frozenset(params.get("properties", {}))
