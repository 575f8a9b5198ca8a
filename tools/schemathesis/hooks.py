# What schemathesis cannot read from our OpenAPI document, for the run of
# test/registry/openapi-schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS): the values of
# the format it names beyond JSON Schema's own, and the rules that tie a request to the path or
# to the server's state, which each operation's description states in words.
import base64
import binascii
import json
import re

import schemathesis
from schemathesis import GenerationMode
from hypothesis import strategies as st

# Text a server name or version may hold in a cursor: no NUL (the store cannot keep one) and no
# surrogates (JavaScript counts lengths in UTF-16 units).
_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00", max_codepoint=0xFFFF),
    max_size=100,
)
_BASE64URL = re.compile(r"^[A-Za-z0-9_-]+$")


def _cursor(pair: tuple[str, str]) -> str:
    """A page cursor as the server issues one: base64url of the JSON pair [name, version]."""
    raw = json.dumps(list(pair), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _is_cursor(text: str) -> bool:
    try:
        pair = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError):
        return False
    return (
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(p, str) and "\x00" not in p for p in pair)
        and len(pair[0]) <= 200
        and len(pair[1]) <= 255
    )


# `mcpfleet-cursor`: metadata.nextCursor of an earlier page. Any other string is refused (400).
schemathesis.openapi.format("mcpfleet-cursor", st.tuples(_TEXT, _TEXT).map(_cursor))

# Sources every registry the run creates may name: the configuration's.
_SOURCES = ["catalog", "team"]


def _without_nul(value):
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    return value


@schemathesis.hook
def before_call(context, case, **kwargs):
    # The coverage phase spells some strings with U+0000 whatever allow-x00 says; a valid request
    # holds none (the document's description).
    if case.meta is not None and case.meta.generation.mode == GenerationMode.POSITIVE:
        case.body = _without_nul(case.body)
    query = case.query or {}
    cursor = query.get("cursor")
    # A cursor of the cursor's spelling that the server never issued is refused like any other:
    # where the generator spelled one, send one the server issued.
    if isinstance(cursor, str) and _BASE64URL.match(cursor) and not _is_cursor(cursor):
        query["cursor"] = _cursor(("", ""))
    body = case.body
    path = case.operation.path
    if case.method.upper() != "PUT" or not isinstance(body, dict):
        return
    if path in ("/v1/sources/{name}", "/v1/registries/{name}") and "name" in body:
        # A body's name is the path's (the operation's description says so).
        body["name"] = case.path_parameters["name"]
    sources = body.get("sources")
    if path == "/v1/registries/{name}" and isinstance(sources, list) and sources:
        if all(isinstance(s, str) for s in sources) and len(set(sources)) == len(sources):
            # A registry names sources that exist.
            body["sources"] = _SOURCES[: min(len(sources), len(_SOURCES))]
