"""The codegen hooks of hetero's built-in external-codegen kinds, one module per kind
(registered by name in `hetero.targets.codegen.BUILTIN_CODEGENS`)."""
