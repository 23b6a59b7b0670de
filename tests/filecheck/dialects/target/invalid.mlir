// RUN: hetero-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{bad value 3 for option 'arch' of target kind 'cuda': expected a value of type str}}
"test.op"() {v = #target.target<"cuda", {arch = 3}>} : () -> ()

// -----

// expected-error@+1 {{unknown option 'foo' for target kind 'llvm'}}
"test.op"() {v = #target.target<"llvm", {foo = "x"}>} : () -> ()

// -----

// expected-error@+1 {{unknown target kind 'nope' (registered kinds:}}
"test.op"() {v = #target.target<"nope">} : () -> ()

// -----

// expected-error@+1 {{expected one of 0, 1, 2, 3}}
"test.op"() {v = #target.target<"llvm", {opt_level = 7}>} : () -> ()

// -----

// expected-error@+1 {{host target 'cuda' is not a CPU target}}
"test.op"() {v = #target.target<"cuda", host = #target.target<"cuda">>} : () -> ()

// -----

// expected-error@+1 {{a host target cannot have a host of its own}}
"test.op"() {v = #target.target<"cuda", host = #target.target<"llvm", host = #target.target<"llvm">>>} : () -> ()

// -----

// expected-error@+1 {{target 'cuda' is for device type 'cuda', not 'cpu'}}
"test.op"() {v = #target.vdevice<cpu, target = #target.target<"cuda">>} : () -> ()

// -----

// expected-error@+1 {{unknown device type 'tpu'}}
"test.op"() {v = #target.vdevice<tpu:0>} : () -> ()

// -----

// expected-error@+1 {{multiple targets have been given for the same device kind 'cuda'}}
"test.op"() {v = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cuda">]>} : () -> ()

// -----

// expected-error@+1 {{the first must be for non external codegen, and all subsequent must be for external codegen: 'cuda' is not external codegen for 'cublas'}}
"test.op"() {v = #target.config<[#target.target<"cublas">, #target.target<"cuda">]>} : () -> ()

// -----

// expected-error@+1 {{requires at least one target}}
"test.op"() {v = #target.config<[]>} : () -> ()

// -----

// expected-error@+1 {{no target is given for the default device type 'cuda'}}
"test.op"() {v = #target.config<[#target.target<"llvm">], fallback = cuda>} : () -> ()
