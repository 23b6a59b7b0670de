// RUN: hetero-opt %s -p annotate-device-regions --verify-diagnostics

// Every prim_func needs a target (docs/design.md §7.2).
// expected-error@+1 {{annotate-device-regions: @f has no target; run bind-target first}}
tir.prim_func @f() {
}
