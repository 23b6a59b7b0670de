// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm", {mcpu = "znver5"}>, #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">>, #target.target<"cublas">], fallback = cuda>}
// CHECK-GENERIC: "builtin.module"() ({
// CHECK-GENERIC: }) {target.config = #target.config<[#target.target<"llvm", {mcpu = "znver5"}>
builtin.module attributes {target.config = #target.config<[#target.target<"llvm", {mcpu = "znver5"}>, #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">>, #target.target<"cublas">], fallback = cuda>} {
  // CHECK: "test.op"() {
  // CHECK-SAME: a = #target.vdevice<?>
  // CHECK-SAME: b = #target.vdevice<cuda>
  // CHECK-SAME: c = #target.vdevice<cuda:1>
  // CHECK-SAME: d = #target.vdevice<?, scope = "global">
  // CHECK-SAME: e = #target.vdevice<cpu:0, target = #target.target<"llvm", {mattr = ["+avx2"], num_threads = 2 : i64}>, scope = "global">
  // CHECK-SAME: f = #target.vdevice<cuda, target = #target.target<"cuda">>
  // CHECK-SAME: g = #target.vdevice<?:3>
  "test.op"() {a = #target.vdevice<?>, b = #target.vdevice<cuda>, c = #target.vdevice<cuda:1>, d = #target.vdevice<?, scope = "global">, e = #target.vdevice<cpu:0, target = #target.target<"llvm", {mattr = ["+avx2"], num_threads = 2 : i64}>, scope = "global">, f = #target.vdevice<?, target = #target.target<"cuda">>, g = #target.vdevice<?:3>} : () -> ()
  // CHECK: "test.op"() {t = #target.target<"tensorrt">, u = #target.target<"blas">, v = #target.target<"cudnn", {arch = "sm_90"}>, w = #target.target<"cutlass">, x = #target.config<[#target.target<"cuda">]>} : () -> ()
  "test.op"() {t = #target.target<"tensorrt">, u = #target.target<"blas">, v = #target.target<"cudnn", {arch = "sm_90"}>, w = #target.target<"cutlass">, x = #target.config<[#target.target<"cuda">]>} : () -> ()
}
