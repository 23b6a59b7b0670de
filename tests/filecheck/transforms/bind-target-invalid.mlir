// The option is checked before anything changes; every error names the problem.
// RUN: not hetero-opt %s -p bind-target 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not hetero-opt %s -p 'bind-target{target=npu}' 2>&1 | filecheck %s --check-prefix=KIND
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -arch"}' 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -cores=4"}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -max_threads_per_block=many"}' 2>&1 | filecheck %s --check-prefix=INT
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -host=cuda"}' 2>&1 | filecheck %s --check-prefix=HOST
// RUN: not hetero-opt %s -p 'bind-target{target=cuda host="llvm -opt_level=7"}' 2>&1 | filecheck %s --check-prefix=HOSTOPT
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -host="}' 2>&1 | filecheck %s --check-prefix=EMPTYHOST
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -host=llvm -host=llvm"}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not hetero-opt %s -p 'bind-target{target="cuda -arch=banana"}' 2>&1 | filecheck %s --check-prefix=ARCH

// MISSING: error: bind-target needs a target, e.g. bind-target{target="cuda -host=llvm"}
// KIND:    error: bind-target: bad target 'npu': unknown target kind 'npu'
// FLAG:    error: bind-target: bad target 'cuda -arch': expected '-option=value', got '-arch'
// OPTION:  error: bind-target: bad target 'cuda -cores=4': unknown option 'cores' for target kind 'cuda'
// INT:     error: bind-target: bad target 'cuda -max_threads_per_block=many': option 'max_threads_per_block' takes an integer, not 'many'
// HOST:    error: bind-target: bad target 'cuda -host=cuda': host target 'cuda' is not a CPU target
// HOSTOPT: error: bind-target: bad target 'llvm -opt_level=7': bad value 7 for option 'opt_level' of target kind 'llvm': expected one of 0, 1, 2, 3
// EMPTYHOST: error: bind-target: bad target 'cuda -host=': expected '-option=value', got '-host='
// TWICE:   error: bind-target: bad target 'cuda -host=llvm -host=llvm': option '-host' is given twice
// ARCH:    error: bind-target: bad target 'cuda -arch=banana': bad value 'banana' for option 'arch' of target kind 'cuda': expected a value matching 'sm_[0-9]+a?'

tir.prim_func @f() {
}
