"""Local fixes for xDSL 0.74 problems that hetero's users would otherwise hit.

Imported by `hetero.utils.diagnostics`, i.e. by every hetero tool's parser.

* String literals: xDSL lexes `"..."` with a regex whose repeated group has a
  repeated item, so an unterminated quote at the start of a long line
  backtracks exponentially (found by tests/test_fuzz_inputs.py).  The same
  language, with possessive quantifiers, fails in linear time.
* Resource handles (`dense_resource<key>`): re-parsing a key already in the
  process-wide blob table left the attribute without its blob (see below).
"""

import re

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.parser.attribute_parser import AttrParser
from xdsl.utils.mlir_lexer import MLIRLexer

MLIRLexer._unescaped_characters_regex = re.compile(  # pyright: ignore[reportPrivateUsage]
    r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"'
)

# * Resource handles: the parser declares every `dense_resource<key>` it meets
#   in the builtin dialect's (process-wide) blob storage, renaming the key when
#   it is already taken -- but it remembers only the *renamed* key, so the
#   `{-# dialect_resources #-}` entry for the same key, parsed later, is
#   declared again under a second name and the attribute's blob stays empty.
#   That happens whenever a file is parsed in a process that already holds a
#   resource of that name (printing then re-parsing, parsing a file twice).
#   Each parser now maps every key it has seen to the name it was given.


def _parse_dialect_resource_handle(
    self: AttrParser, dialect_name: str, interface: OpAsmDialectInterface
) -> str:
    key = self.parse_identifier(" for resource handle")
    names: dict[tuple[str, str], str] = self.__dict__.setdefault("_resource_names", {})
    if (dialect_name, key) not in names:
        # Imported here: hetero.utils.dense_resources imports this module.
        from hetero.utils.dense_resources import record_blob

        names[(dialect_name, key)] = interface.declare_resource(key)
        record_blob(names[(dialect_name, key)])
        self.dialect_resources.add((dialect_name, names[(dialect_name, key)]))
    return names[(dialect_name, key)]


AttrParser._parse_dialect_resource_handle = _parse_dialect_resource_handle  # pyright: ignore[reportPrivateUsage]
