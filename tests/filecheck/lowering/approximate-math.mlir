// RUN: hetero-opt %s --split-input-file -p approximate-math | filecheck %s

// exp on f32: clamped to [-104, 89] by ordered compares (NaN passes), n
// rounded with 1.5 * 2^23, a polynomial in contractible multiply-adds, and
// 2^n applied in two halves built from exponent bits (denormal results).
// CHECK-LABEL: func.func @exp
// CHECK-NOT:   math.exp
// CHECK:       arith.cmpf olt, %x, %{{.*}} : f32
// CHECK:       arith.cmpf ogt
// CHECK:       arith.constant 0x4B400000 : f32
// CHECK:       arith.mulf %{{.*}} fastmath<contract> : f32
// CHECK:       arith.shrsi %{{.*}} : i32
// CHECK:       arith.shli %{{.*}} : i32
// CHECK:       %[[HALF:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:  %[[P:.*]] = arith.mulf %{{.*}}, %[[HALF]] fastmath<contract> : f32
// CHECK:       %[[REST:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:  %r = arith.mulf %[[P]], %[[REST]] fastmath<contract> : f32
// CHECK-NEXT:  func.return %r : f32
func.func @exp(%x: f32) -> f32 {
  %r = math.exp %x : f32
  return %r : f32
}

// -----

// Vectors of any width, the same code lane-wise (integers as vectors of i32).
// CHECK-LABEL: func.func @exp_vector
// CHECK-NOT:   math.exp
// CHECK:       arith.bitcast %{{.*}} : vector<3xi32> to vector<3xf32>
// CHECK:       func.return %{{.*}} : vector<3xf32>
func.func @exp_vector(%v: vector<3xf32>) -> vector<3xf32> {
  %r = math.exp %v : vector<3xf32>
  return %r : vector<3xf32>
}

// -----

// log: the significand into [sqrt(1/2), sqrt(2)) by integer arithmetic on the
// bits; 0, +inf and negatives or NaN by the last selects.
// CHECK-LABEL: func.func @log
// CHECK-NOT:   math.log
// CHECK:       arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK:       arith.andi
// CHECK:       arith.shrsi
// CHECK:       arith.cmpf oeq, %v
// CHECK:       arith.cmpf oeq, %v
// CHECK:       arith.cmpf ult, %v
// CHECK-NEXT:  %r = arith.select
// CHECK-NEXT:  func.return %r : vector<8xf32>
func.func @log(%v: vector<8xf32>) -> vector<8xf32> {
  %r = math.log %v : vector<8xf32>
  return %r : vector<8xf32>
}

// -----

// tanh and erf: on |x|, an odd polynomial below a threshold, exp above; the
// sign put back last.
// CHECK-LABEL: func.func @tanh
// CHECK-NOT:   math.tanh
// CHECK:       %[[A:.*]] = math.absf %v : vector<16xf32>
// CHECK:       arith.divf
// CHECK:       %[[SMALL:.*]] = arith.cmpf olt, %[[A]]
// CHECK-NEXT:  %[[M:.*]] = arith.select %[[SMALL]]
// CHECK-NEXT:  %r = math.copysign %[[M]], %v : vector<16xf32>
// CHECK-NEXT:  func.return %r
func.func @tanh(%v: vector<16xf32>) -> vector<16xf32> {
  %r = math.tanh %v : vector<16xf32>
  return %r : vector<16xf32>
}
// CHECK-LABEL: func.func @erf
// CHECK-NOT:   math.erf
// CHECK:       math.absf %x : f32
// CHECK:       arith.bitcast %{{.*}} : i32 to f32
// CHECK:       math.copysign %{{.*}}, %x : f32
func.func @erf(%x: f32) -> f32 {
  %r = math.erf %x : f32
  return %r : f32
}

// -----

// Other element types are left to convert-math-to-llvm.
// CHECK-LABEL: func.func @other_types
// CHECK-NEXT:  math.exp %d : f64
// CHECK-NEXT:  math.log %d : f64
// CHECK-NEXT:  math.tanh %h : vector<4xf16>
// CHECK-NEXT:  math.erf %d : f64
func.func @other_types(%d: f64, %h: vector<4xf16>) -> (f64, f64, vector<4xf16>, f64) {
  %e = math.exp %d : f64
  %l = math.log %d : f64
  %t = math.tanh %h : vector<4xf16>
  %r = math.erf %d : f64
  return %e, %l, %t, %r : f64, f64, vector<4xf16>, f64
}

// -----

// isa=avx512 (AVX-512 targets: math_isa): on 16-lane vectors, exp is 2^(n/16)
// from a table in a register (vpermps) times a cubic, scaled by vscalefps
// (denormals and overflow in one instruction); other widths get the arith
// code above.
// RUN: hetero-opt %s --split-input-file -p 'approximate-math{isa="avx512"}' | filecheck %s --check-prefix=AVX512
// AVX512-LABEL: func.func @exp_avx512
// AVX512-NOT:   math.exp
// AVX512:       arith.constant dense<[1.000000e+00, 1.04427373, {{.*}}, 1.91520655]> : vector<16xf32>
// AVX512:       llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// AVX512:       llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// AVX512-LABEL: func.func @exp_other_width
// AVX512-NOT:   llvm.call_intrinsic
// AVX512:       func.return
func.func @exp_avx512(%v: vector<16xf32>) -> vector<16xf32> {
  %r = math.exp %v : vector<16xf32>
  return %r : vector<16xf32>
}
func.func @exp_other_width(%v: vector<8xf32>, %x: f32) -> (vector<8xf32>, f32) {
  %r = math.exp %v : vector<8xf32>
  %s = math.exp %x : f32
  return %r, %s : vector<8xf32>, f32
}

// -----

// isa=avx512: tanh is a polynomial per piece of |x| (halves of binades), the
// row bits(|x|) >> 22 (at least that of [0, 1/8)), its start and
// coefficients looked up in registers: no exp, no division.
// AVX512-LABEL: func.func @tanh_avx512
// AVX512-NOT:   math.tanh
// AVX512-NOT:   arith.divf
// AVX512:       arith.shrui %{{.*}} : vector<16xi32>
// AVX512:       arith.maxsi %{{.*}} : vector<16xi32>
// AVX512:       llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// AVX512-NOT:   arith.divf
// AVX512:       math.copysign %{{.*}}, %v : vector<16xf32>
func.func @tanh_avx512(%v: vector<16xf32>) -> vector<16xf32> {
  %r = math.tanh %v : vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// isa=avx512: erf the same way (pieces up to [3, 3.92]), plus x on [0, 1/8):
// x + x P(x) there, as 2/sqrt(pi) is no f32.
// AVX512-LABEL: func.func @erf_avx512
// AVX512-NOT:   math.erf
// AVX512-NOT:   arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// AVX512:       arith.maxsi %{{.*}} : vector<16xi32>
// AVX512:       llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// AVX512:       math.copysign %{{.*}}, %v : vector<16xf32>
func.func @erf_avx512(%v: vector<16xf32>) -> vector<16xf32> {
  %r = math.erf %v : vector<16xf32>
  return %r : vector<16xf32>
}
