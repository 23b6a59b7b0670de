"""Local fixes for xDSL 0.74 problems that hetero's users would otherwise hit.

Imported by `hetero.utils.diagnostics`, i.e. by every hetero tool's parser.

* String literals: xDSL lexes `"..."` with a regex whose repeated group has a
  repeated item, so an unterminated quote at the start of a long line
  backtracks exponentially (found by tests/test_fuzz_inputs.py).  The same
  language, with possessive quantifiers, fails in linear time.
"""

import re

from xdsl.utils.mlir_lexer import MLIRLexer

MLIRLexer._unescaped_characters_regex = re.compile(  # pyright: ignore[reportPrivateUsage]
    r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"'
)
