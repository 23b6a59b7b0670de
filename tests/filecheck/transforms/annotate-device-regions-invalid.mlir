// RUN: hetero-opt %s -p annotate-device-regions --verify-diagnostics

// Spec §7.3: every prim_func needs a target ("Require the target attribute").
// expected-error@+1 {{annotate-device-regions: @f has no target; run bind-target first}}
tir.prim_func @f() {
}
