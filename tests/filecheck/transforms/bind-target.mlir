// RUN: hetero-opt %s -p 'bind-target{target="cuda -host=llvm"}' --split-input-file | filecheck %s
// RUN: hetero-opt %s -p 'bind-target{target="cuda -host=llvm"}' --split-input-file > %t && hetero-opt %t -p 'bind-target{target="cuda -host=llvm"}' --split-input-file | diff %t -
// RUN: hetero-opt %s -p 'bind-target{target=cuda}' --split-input-file | filecheck %s --check-prefix=NOHOST
// RUN: hetero-opt %s -p 'bind-target{target="cuda -arch=sm_80" host="llvm -opt_level=0"}' --split-input-file | filecheck %s --check-prefix=OPTS

// TVM test_bind_target_with_host_to_exposed_function: a public function is
// exposed through the host API, so it gets the target with its host.
// test_bind_target_adds_attribute: without a host in the option, just the target.
// CHECK:  tir.prim_func @main() target #target.target<"cuda", host = #target.target<"llvm">> {
// NOHOST: tir.prim_func @main() target #target.target<"cuda"> {
// OPTS:   tir.prim_func @main() target #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm", {opt_level = 0 : i64}>> {
tir.prim_func @main() {
}

// -----

// TVM test_bind_target_with_host_to_internal_function: a private function is
// an internal subroutine and never gets a host.
// CHECK:  tir.prim_func private @internal() target #target.target<"cuda"> {
// NOHOST: tir.prim_func private @internal() target #target.target<"cuda"> {
// OPTS:   tir.prim_func private @internal() target #target.target<"cuda", {arch = "sm_80"}> {
tir.prim_func private @internal() {
}

// -----

// TVM test_bind_target_ignores_existing: an existing target is never
// overwritten (#14942) ...
// NOHOST: tir.prim_func @main() target #target.target<"cuda", {arch = "sm_80"}> {
// ... test_bind_target_updates_host: but an exposed function without a host
// gains the option's host (with its options).
// CHECK:  tir.prim_func @main() target #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">> {
// OPTS:   tir.prim_func @main() target #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm", {opt_level = 0 : i64}>> {
tir.prim_func @main() target #target.target<"cuda", {arch = "sm_80"}> {
}

// -----

// An existing host is kept, and a private function never gains one; an
// existing CPU target stays a CPU target.
// CHECK:  tir.prim_func @exposed() target #target.target<"llvm", host = #target.target<"llvm", {opt_level = 1 : i64}>> {
// CHECK:  tir.prim_func private @internal() target #target.target<"llvm"> {
tir.prim_func @exposed() target #target.target<"llvm", host = #target.target<"llvm", {opt_level = 1}>> {
}
tir.prim_func private @internal() target #target.target<"llvm"> {
}

// -----

// TVM test_bind_target_multiple_functions: every function of the module.
// NOHOST: tir.prim_func @func1() target #target.target<"cuda"> {
// NOHOST: tir.prim_func @func2() target #target.target<"cuda"> {
tir.prim_func @func1() {
}
tir.prim_func @func2() {
}

// -----

// tir.is_host_func (TVM test_tir_host_func): the function runs on the host,
// so it gets the host target with that same host (`llvm` when the option
// has no host); the flag is removed, target and flag are mutually exclusive.
// CHECK:      tir.prim_func @host() target #target.target<"llvm", host = #target.target<"llvm">> {
// CHECK:      tir.prim_func private @private_host() target #target.target<"llvm", host = #target.target<"llvm">> {
// NOHOST:     tir.prim_func @host() target #target.target<"llvm", host = #target.target<"llvm">> {
// OPTS:       tir.prim_func @host() target #target.target<"llvm", {opt_level = 0 : i64}, host = #target.target<"llvm", {opt_level = 0 : i64}>> {
// A false flag is ignored (and removed); a flag next to a target is removed,
// the target kept.
// CHECK:      tir.prim_func @not_host() target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK:      tir.prim_func private @already() target #target.target<"cuda"> {
// CHECK-NOT:  tir.is_host_func
tir.prim_func @host() attributes {tir.is_host_func = true} {
}
tir.prim_func private @private_host() attributes {tir.is_host_func = true} {
}
tir.prim_func @not_host() attributes {tir.is_host_func = false} {
}
tir.prim_func private @already() target #target.target<"cuda"> attributes {tir.is_host_func = true} {
}

// -----

// A public kernel marked tir.is_global_func (lower-device-kernel-launch's
// output) is reached by symbol, not through the host API: it never gets a
// host, so re-running the pipeline does not re-outline it.
// CHECK:  tir.prim_func @launched() target #target.target<"cuda"> attributes {tir.is_global_func = true, calling_conv = 2 : i64} {
// CHECK:  tir.prim_func @extern_called() target #target.target<"cuda"> attributes {tir.is_global_func = true} {
tir.prim_func @launched() target #target.target<"cuda"> attributes {tir.is_global_func = true, calling_conv = 2 : i64} {
}
tir.prim_func @extern_called() attributes {tir.is_global_func = true} {
}
