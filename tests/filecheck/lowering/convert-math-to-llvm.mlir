// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-math-to-llvm | filecheck %s

// Ops with an LLVM intrinsic: one call, mangled by type.
// CHECK-LABEL: func.func @intrinsics
// CHECK-SAME: (%[[X:.*]]: f32, %[[V:.*]]: vector<8xf64>, %[[I:.*]]: i32)
func.func @intrinsics(%x: f32, %v: vector<8xf64>, %i: i32) {
  // CHECK-NEXT: llvm.call_intrinsic "llvm.exp.f32"(%[[X]]) : (f32) -> f32
  // CHECK-NEXT: llvm.call_intrinsic "llvm.exp2.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.log.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.log2.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.log10.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.sqrt.v8f64"(%[[V]]) : (vector<8xf64>) -> vector<8xf64>
  // CHECK-NEXT: llvm.call_intrinsic "llvm.fabs.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.sin.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.cos.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.tan.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.asin.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.acos.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.atan.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.sinh.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.cosh.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.floor.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.ceil.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.round.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.roundeven.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.trunc.v8f64"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.pow.f32"(%[[X]], %[[X]]) : (f32, f32) -> f32
  // CHECK-NEXT: llvm.call_intrinsic "llvm.copysign.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.atan2.f32"
  // CHECK-NEXT: llvm.call_intrinsic "llvm.fma.v8f64"(%[[V]], %[[V]], %[[V]]) : (vector<8xf64>, vector<8xf64>, vector<8xf64>) -> vector<8xf64>
  // CHECK-NEXT: llvm.call_intrinsic "llvm.ctpop.i32"(%[[I]]) : (i32) -> i32
  %0 = math.exp %x : f32
  %1 = math.exp2 %x : f32
  %2 = math.log %x : f32
  %3 = math.log2 %x : f32
  %4 = math.log10 %x : f32
  %5 = math.sqrt %v : vector<8xf64>
  %6 = math.absf %x : f32
  %7 = math.sin %x : f32
  %8 = math.cos %x : f32
  %9 = math.tan %x : f32
  %10 = math.asin %x : f32
  %11 = math.acos %x : f32
  %12 = math.atan %x : f32
  %13 = math.sinh %x : f32
  %14 = math.cosh %x : f32
  %15 = math.floor %x : f32
  %16 = math.ceil %x : f32
  %17 = math.round %x : f32
  %18 = math.roundeven %x : f32
  %19 = math.trunc %v : vector<8xf64>
  %20 = math.powf %x, %x : f32
  %21 = math.copysign %x, %x : f32
  %22 = math.atan2 %x, %x : f32
  %23 = math.fma %v, %v, %v : vector<8xf64>
  %24 = math.ctpop %i : i32
  // Integer intrinsics with an `is_poison` flag, passed as false.
  // CHECK-NEXT: %[[F:.*]] = llvm.mlir.constant(false) : i1
  // CHECK-NEXT: llvm.call_intrinsic "llvm.abs.i32"(%[[I]], %[[F]]) : (i32, i1) -> i32
  // CHECK-NEXT: %[[F2:.*]] = llvm.mlir.constant(false) : i1
  // CHECK-NEXT: llvm.call_intrinsic "llvm.ctlz.i32"(%[[I]], %[[F2]]) : (i32, i1) -> i32
  // CHECK-NEXT: %[[F3:.*]] = llvm.mlir.constant(false) : i1
  // CHECK-NEXT: llvm.call_intrinsic "llvm.cttz.i32"(%[[I]], %[[F3]]) : (i32, i1) -> i32
  %25 = math.absi %i : i32
  %26 = math.ctlz %i : i32
  %27 = math.cttz %i : i32
  func.return
}

// -----

// rsqrt is 1 / sqrt(x).
// CHECK-LABEL: func.func @rsqrt
func.func @rsqrt(%x: f64) -> f64 {
  // CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f64) : f64
  // CHECK-NEXT: %[[S:.*]] = llvm.call_intrinsic "llvm.sqrt.f64"(%{{.*}}) : (f64) -> f64
  // CHECK-NEXT: %[[R:.*]] = llvm.fdiv %[[ONE]], %[[S]] {fastmathFlags = #llvm.fastmath<afn>} : f64
  // CHECK-NEXT: func.return %[[R]]
  %0 = math.rsqrt %x fastmath<afn> : f64
  func.return %0 : f64
}

// -----

// expm1 with Kahan's (u - 1) * x / log(u), and its three special cases.
// CHECK-LABEL: func.func @expm1
// CHECK-SAME: (%[[X:.*]]: f32)
func.func @expm1(%x: f32) -> f32 {
  // CHECK-NEXT: %[[U:.*]] = llvm.call_intrinsic "llvm.exp.f32"(%[[X]])
  // CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32)
  // CHECK-NEXT: %[[UM1:.*]] = llvm.fsub %[[U]], %[[ONE]]
  // CHECK-NEXT: %[[NUM:.*]] = llvm.fmul %[[UM1]], %[[X]]
  // CHECK-NEXT: %[[LOG:.*]] = llvm.call_intrinsic "llvm.log.f32"(%[[U]])
  // CHECK-NEXT: %[[K:.*]] = llvm.fdiv %[[NUM]], %[[LOG]]
  // CHECK-NEXT: %[[INF:.*]] = llvm.mlir.constant(0x7f800000 : f32)
  // CHECK-NEXT: %[[C1:.*]] = llvm.fcmp "oeq" %[[U]], %[[INF]]
  // CHECK-NEXT: %[[R1:.*]] = llvm.select %[[C1]], %[[U]], %[[K]]
  // CHECK-NEXT: %[[MINUS:.*]] = llvm.mlir.constant(-1.000000e+00 : f32)
  // CHECK-NEXT: %[[C2:.*]] = llvm.fcmp "oeq" %[[UM1]], %[[MINUS]]
  // CHECK-NEXT: %[[R2:.*]] = llvm.select %[[C2]], %[[UM1]], %[[R1]]
  // CHECK-NEXT: %[[C3:.*]] = llvm.fcmp "oeq" %[[U]], %[[ONE]]
  // CHECK-NEXT: %[[R3:.*]] = llvm.select %[[C3]], %[[X]], %[[R2]]
  // CHECK-NEXT: func.return %[[R3]]
  %0 = math.expm1 %x : f32
  func.return %0 : f32
}

// -----

// log1p with log(u) * x / (u - 1), u = 1 + x.
// CHECK-LABEL: func.func @log1p
func.func @log1p(%x: f64) -> f64 {
  // CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f64)
  // CHECK-NEXT: %[[U:.*]] = llvm.fadd %[[ONE]], %[[X:.*]] : f64
  // CHECK-NEXT: llvm.call_intrinsic "llvm.log.f64"(%[[U]])
  // CHECK-NEXT: llvm.fmul
  // CHECK-NEXT: llvm.fsub %[[U]], %[[ONE]]
  // CHECK-NEXT: llvm.fdiv
  // CHECK:      %[[C:.*]] = llvm.fcmp "oeq" %[[U]], %[[ONE]] : f64
  // CHECK-NEXT: %[[R:.*]] = llvm.select %[[C]], %[[X]], %{{.*}} : i1, f64
  // CHECK-NEXT: func.return %[[R]]
  %0 = math.log1p %x : f64
  func.return %0 : f64
}

// -----

// tanh(x) = copysign(e / (e + 2), x), e = expm1(2|x|); 1 beyond the saturation.
// CHECK-LABEL: func.func @tanh
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>)
func.func @tanh(%x: vector<8xf32>) -> vector<8xf32> {
  // CHECK-NEXT: %[[A:.*]] = llvm.call_intrinsic "llvm.fabs.v8f32"(%[[X]])
  // CHECK-NEXT: %[[TWO_A:.*]] = llvm.fadd %[[A]], %[[A]] : vector<8xf32>
  // CHECK-NEXT: llvm.call_intrinsic "llvm.exp.v8f32"(%[[TWO_A]])
  // CHECK:      %[[E:.*]] = llvm.select %{{.*}}, %[[TWO_A]], %{{.*}} : vector<8xi1>, vector<8xf32>
  // CHECK-NEXT: %[[TWO:.*]] = llvm.mlir.constant(dense<2.000000e+00> : vector<8xf32>)
  // CHECK-NEXT: %[[DEN:.*]] = llvm.fadd %[[E]], %[[TWO]]
  // CHECK-NEXT: %[[RATIO:.*]] = llvm.fdiv %[[E]], %[[DEN]]
  // CHECK-NEXT: %[[SAT:.*]] = llvm.mlir.constant(dense<9.000000e+00> : vector<8xf32>)
  // CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(dense<1.000000e+00> : vector<8xf32>)
  // CHECK-NEXT: %[[BIG:.*]] = llvm.fcmp "ogt" %[[A]], %[[SAT]] : vector<8xf32>
  // CHECK-NEXT: %[[R:.*]] = llvm.select %[[BIG]], %[[ONE]], %[[RATIO]] : vector<8xi1>, vector<8xf32>
  // CHECK-NEXT: %[[T:.*]] = llvm.call_intrinsic "llvm.copysign.v8f32"(%[[R]], %[[X]])
  // CHECK-NEXT: func.return %[[T]]
  %0 = math.tanh %x : vector<8xf32>
  func.return %0 : vector<8xf32>
}

// -----

// No intrinsic: a C library call, one per vector lane.
// CHECK-LABEL: func.func @libm
func.func @libm(%x: f32, %v: vector<2xf64>) -> (f32, vector<2xf64>, f64) {
  // CHECK-NEXT: %[[E:.*]] = llvm.call @erff(%{{.*}}) : (f32) -> f32
  // CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : vector<2xf64>
  // CHECK-NEXT: %[[P0:.*]] = llvm.mlir.constant(0) : i64
  // CHECK-NEXT: %[[X0:.*]] = llvm.extractelement %[[V:.*]][%[[P0]] : i64] : vector<2xf64>
  // CHECK-NEXT: %[[Y0:.*]] = llvm.call @cbrt(%[[X0]]) : (f64) -> f64
  // CHECK-NEXT: %[[R0:.*]] = llvm.insertelement %[[Y0]], %[[U]][%[[P0]] : i64] : vector<2xf64>
  // CHECK-NEXT: %[[P1:.*]] = llvm.mlir.constant(1) : i64
  // CHECK-NEXT: %[[X1:.*]] = llvm.extractelement %[[V]][%[[P1]] : i64] : vector<2xf64>
  // CHECK-NEXT: %[[Y1:.*]] = llvm.call @cbrt(%[[X1]]) : (f64) -> f64
  // CHECK-NEXT: %[[R1:.*]] = llvm.insertelement %[[Y1]], %[[R0]][%[[P1]] : i64] : vector<2xf64>
  // CHECK-NEXT: llvm.call @asinhf(
  // CHECK-NEXT: llvm.call @acoshf(
  // CHECK-NEXT: llvm.call @atanhf(
  // CHECK-NEXT: arith.extf
  // CHECK-NEXT: %[[D:.*]] = llvm.call @asinh(
  %0 = math.erf %x : f32
  %1 = math.cbrt %v : vector<2xf64>
  %2 = math.asinh %0 : f32
  %3 = math.acosh %2 : f32
  %4 = math.atanh %3 : f32
  %5 = arith.extf %4 : f32 to f64
  %6 = math.asinh %5 : f64
  // CHECK-NEXT: func.return %[[E]], %[[R1]], %[[D]]
  func.return %0, %1, %6 : f32, vector<2xf64>, f64
}
// Each function is declared once, external.
// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-DAG: llvm.func @cbrt(f64) -> f64
// CHECK-DAG: llvm.func @asinh(f64) -> f64
// CHECK-DAG: llvm.func @asinhf(f32) -> f32

// -----

func.func @f16_erf(%x: f16) -> f16 {
  // expected-error@+1 {{'math.erf' on f16: the C library has f32 and f64 only}}
  %0 = math.erf %x : f16
  func.return %0 : f16
}

// -----

func.func @no_lowering(%x: f32, %n: i32) -> f32 {
  // expected-error@+1 {{convert-math-to-llvm: no lowering for 'math.fpowi'}}
  %0 = math.fpowi %x, %n : f32, i32
  func.return %0 : f32
}
