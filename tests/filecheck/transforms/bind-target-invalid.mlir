// The option is checked before anything changes; every error names the problem.
// RUN: not hetero-opt %s -p bind-target 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not hetero-opt %s -p 'bind-target{target=npu}' 2>&1 | filecheck %s --check-prefix=KIND
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -arch"}' 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -cores=4"}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -max_threads_per_block=many"}' 2>&1 | filecheck %s --check-prefix=INT
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -host=cuda"}' 2>&1 | filecheck %s --check-prefix=HOST
// RUN: not hetero-opt %s -p 'bind-target{target=cuda host="llvm -opt_level=7"}' 2>&1 | filecheck %s --check-prefix=HOSTOPT

// MISSING: error: bind-target needs a target, e.g. bind-target{target="cuda -host=llvm"}
// KIND:    error: bind-target: bad target 'npu': unknown target kind 'npu'
// FLAG:    error: bind-target: bad target 'cuda -arch': expected '-option=value', got '-arch'
// OPTION:  error: bind-target: bad target 'cuda -cores=4': unknown option 'cores' for target kind 'cuda'
// INT:     error: bind-target: bad target 'cuda -max_threads_per_block=many': option 'max_threads_per_block' takes an integer, not 'many'
// HOST:    error: bind-target: bad target 'cuda -host=cuda': host target 'cuda' is not a CPU target
// HOSTOPT: error: bind-target: bad target 'llvm -opt_level=7': bad value 7 for option 'opt_level' of target kind 'llvm': expected one of 0, 1, 2, 3

tir.prim_func @f() {
}
