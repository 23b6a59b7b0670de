"""Running compiled code: translation of the `llvm` dialect to LLVM IR and the CPU JIT."""
